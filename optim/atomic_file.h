// atomic_file.h - whole-file writes that never leave a half-written file (core/atomic_write.h),
// reads of regular files only (never a FIFO or a device), and little-endian integer fields:
// what the two file formats share, checkpoints (checkpoint_file.h) and safetensors (safetensors.h).
//
//   heed::write_file_atomically("save_checkpoint", "run/ckpt.bin", bytes);
//   std::vector<uint8_t> b = heed::read_regular_file("load_checkpoint", "run/ckpt.bin");
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../core/atomic_write.h"

namespace heed {

// A regular file open for reading. The constructor refuses (heed::Error naming `op`, the
// path and what it is) a path that cannot be opened and anything that is not a regular file
// (a directory, a FIFO, a device such as /dev/zero, which never ends): fstat decides before
// a byte is read, and O_NONBLOCK keeps the open of a FIFO from waiting for a writer. A
// reader checks a format's header with read_at, then takes the bytes it declares.
class RegularFile {
 public:
  RegularFile(const char* op, const std::string& path);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  uint64_t size() const { return size_; }  // from fstat at open
  // Up to n bytes at `offset` into p; fewer only at the end of the file.
  size_t read_at(uint8_t* p, size_t n, uint64_t offset) const;
  // Bytes [0, n), refusing a file that is no longer exactly n bytes long (it changed while
  // being read).
  std::vector<uint8_t> read_exactly(uint64_t n) const;

 private:
  const char* op_;
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The bytes of the regular file `path`: RegularFile's checks, then all size() bytes.
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
