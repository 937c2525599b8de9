// fuzz_checkpoint.cpp - libFuzzer target for the checkpoint loader (make fuzz).
//
// Each input is written to a file and loaded into every target (targets.h). Inputs of at
// least header + checksum size are resealed first (size field and checksum rewritten,
// reseal_checkpoint), so mutations reach the record parser instead of stopping at the
// checksum; shorter ones exercise the header checks as they are. A finding is a crash, a
// sanitizer report, a timeout or an exception other than heed::Error.
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::vector<heed::fuzz::Target> ts = heed::fuzz::targets();
  static const std::string path = "/tmp/heed-fuzz-" + std::to_string(getpid()) + ".ckpt";
  std::vector<uint8_t> bytes(data, data + size);
  if (bytes.size() >= 32) heed::reseal_checkpoint(bytes);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  heed::fuzz::load_into_all(path, ts);
  return 0;
}
