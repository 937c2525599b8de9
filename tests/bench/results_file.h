// results_file.h - the "<name> <value>" lines a benchmark leaves for its PyTorch twin to read
// (bench_torch.py and the others print both side by side), written when the run ends through
// heed's atomic writer (core/atomic_file.h): the file is whole or as it was before, never
// half of an interrupted run.
//
//   bench::ResultsFile out(argc > 1 ? argv[1] : "build/bench/heed.txt");
//   out.add("matmul_512_fwd", ms);          // "matmul_512_fwd 1.2345"
//   return out.write() ? 0 : 1;
//
// Copying copies the path and the lines gathered so far; the copies write independently.
// add() does not throw; write() prints the heed::Error of a file it cannot write and returns
// false, leaving the lines in place.
#pragma once
#include <heed/core/atomic_file.h>
#include <heed/core/error.h>

#include <cstdio>
#include <string>
#include <utility>

namespace bench {

class ResultsFile {
 public:
  explicit ResultsFile(std::string path) : path_(std::move(path)) {}
  // one line: name, a space, value with `decimals` digits after the point
  void add(const std::string& name, double value, int decimals = 4) {
    char number[64];
    std::snprintf(number, sizeof number, " %.*f\n", decimals, value);
    text_ += name + number;
  }
  bool write() const {
    try {
      heed::write_file_atomically("bench", path_, text_);
      return true;
    } catch (const heed::Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return false;
    }
  }

 private:
  std::string path_, text_;
};

}  // namespace bench
