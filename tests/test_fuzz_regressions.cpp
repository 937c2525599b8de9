// test_fuzz_regressions.cpp - replays the checkpoint fuzzer's kept inputs (make fuzz).
//   tests/fuzz/corpus/       seed inputs: valid checkpoints of every fuzz target, each of
//                            which must load into its own target
//   tests/fuzz/regressions/  inputs from the fuzzer's corpus (and any it ever finds crashing
//                            or slow), replayed as the fuzz target does (resealed): each must
//                            be accepted or refused with a heed::Error
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <cstdio>
#include <string>

#include "fuzz/targets.h"
#include <heed/optim/checkpoint_file.h>
#include "helpers.h"

namespace fs = std::filesystem;
using namespace heed;

static std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("fuzz seeds: every target's checkpoint loads back into that target") {
  std::vector<fuzz::Target> ts = fuzz::targets();
  const std::vector<std::string> seeds = files_in("tests/fuzz/corpus");
  REQUIRE(seeds.size() == 7);  // 3 targets with an optimizer (2 files each) + 1 model-only
  for (const std::string& path : seeds) {
    INFO(path);
    CHECK(fuzz::load_into_all(path, ts) >= 1);
    // Resealed seeds are what the fuzzer starts from; the seal must not change a valid file.
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<uint8_t> sealed = b;
    reseal_checkpoint(sealed);
    CHECK(sealed == b);
  }
}

TEST_CASE("fuzz regressions: every kept input is accepted or refused with a heed::Error") {
  std::vector<fuzz::Target> ts = fuzz::targets();
  const std::vector<std::string> kept = files_in("tests/fuzz/regressions");
  CHECK(kept.size() >= 20);
  const std::string scratch = "build/fuzz-replay.ckpt";
  for (const std::string& path : kept) {
    INFO(path);
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    int accepted = -1;
    CHECK_NOTHROW(accepted = fuzz::replay_fuzz_input(b, scratch, ts));
    CHECK(accepted >= 0);
  }
  std::remove(scratch.c_str());
}
