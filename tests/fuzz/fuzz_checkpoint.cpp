// fuzz_checkpoint.cpp - libFuzzer target for the checkpoint loader (make fuzz).
//
// Each input is written to a file and loaded into every target (targets.h). Inputs of at
// least header + checksum size are resealed first (size field and checksum rewritten,
// reseal_checkpoint), so mutations reach the record parser instead of stopping at the
// checksum; shorter ones exercise the header checks as they are. A finding is a crash, a
// sanitizer report, a timeout or an exception other than heed::Error.
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::vector<heed::fuzz::Target> ts = heed::fuzz::targets();
  static const std::string path = "/tmp/heed-fuzz-" + std::to_string(getpid()) + ".ckpt";
  heed::fuzz::replay_fuzz_input(std::vector<uint8_t>(data, data + size), path, ts);
  return 0;
}
