// tmp_files.h - a self-removing temporary directory and whole-file byte I/O, for the tests
// that write, damage and reload files (checkpoints).
#pragma once
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace heed::test {

using Bytes = std::vector<uint8_t>;

// A fresh directory under the system temp dir, removed with everything in it.
struct TmpDir {
  TmpDir() {
    static int n = 0;
    dir = std::filesystem::temp_directory_path() /
          ("heed_test_" + std::to_string(getpid()) + "_" + std::to_string(n++));
    std::filesystem::create_directories(dir);
  }
  ~TmpDir() { std::filesystem::remove_all(dir); }
  std::string file(const std::string& name) const { return (dir / name).string(); }
  std::vector<std::string> listing() const {  // sorted file names
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::filesystem::path dir;
};

inline Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

// Writes the first n bytes of b to path, replacing it.
inline void write_bytes(const std::string& path, const Bytes& b, size_t n) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), std::streamsize(n));
}

}  // namespace heed::test
