// atomic_file.h - whole-file writes that never leave a half-written file, reads of a regular
// file of known size, and little-endian integer fields: what the two file formats share,
// checkpoints (checkpoint_file.h) and safetensors (safetensors.h).
//
//   heed::write_file_atomically("save_checkpoint", "run/ckpt.bin", bytes);
//   std::vector<uint8_t> b = heed::read_regular_file("load_checkpoint", "run/ckpt.bin");
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace heed {

// Writes "<path>.tmp.<pid>.<n>" in the same directory, flushes and fsyncs it, renames it over
// `path` (atomic on POSIX) and fsyncs the directory. A crash or error mid-save leaves the
// previous file as it was; on error the temporary file is removed and a heed::Error names
// `op` and the path.
void write_file_atomically(const char* op, const std::string& path, const std::vector<uint8_t>& bytes);

// The bytes of `path`. Refuses (heed::Error naming `op` and the path) a file that cannot be
// opened or read, and anything that is not a regular file (a directory, a FIFO, a device such
// as /dev/zero): the size is taken from fstat before anything is allocated, and a file that
// changes size while being read is refused too.
std::vector<uint8_t> read_regular_file(const char* op, const std::string& path);

// The little-endian unsigned integer of 1..8 bytes at p, whatever the host's byte order.
inline uint64_t get_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline void put_le(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = uint8_t(v >> (8 * i));
}

}  // namespace heed
