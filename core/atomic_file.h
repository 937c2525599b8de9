// atomic_file.h - the one way heed writes a file (checkpoints, safetensors, DOT graphs, the
// examples' PNGs): into the file the user named, whole or not at all; the one way it reads
// one (checkpoints, safetensors): a regular file only, never a FIFO or a device; and the
// little-endian integer fields the two file formats share.
//
//   heed::write_file_atomically("write_dot", "graph.dot", text);
//   std::vector<uint8_t> b = heed::read_regular_file("load_checkpoint", "run/ckpt.bin");
//
// 1. The path is followed to the file it names: a symlink (or a chain of them) to its final
//    target, so the link stays a link and its target gets the bytes, as PyTorch's torch.save
//    (which opens the path) leaves it.
// 2. An existing target that is not a regular file (a directory, a FIFO, a device such as
//    /dev/null, a socket) is refused and left as it is: heed::Error naming `op`, the path
//    and what it is. (Renaming over it would replace a device node with a regular file.)
// 3. "<target>.tmp.<pid>.<n>" is created beside the target (same directory, so the same
//    filesystem), written, fsynced, renamed over the target (atomic on POSIX), and the
//    directory is fsynced. A crash or an error midway leaves the previous file whole; on
//    error the temporary is removed and a heed::Error names `op` and the path.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace heed {

// ---- writing ----

void write_file_atomically(const char* op, const std::string& path, const void* bytes, size_t n);
inline void write_file_atomically(const char* op, const std::string& path, const std::vector<uint8_t>& bytes) {
  write_file_atomically(op, path, bytes.data(), bytes.size());
}
inline void write_file_atomically(const char* op, const std::string& path, const std::string& text) {
  write_file_atomically(op, path, text.data(), text.size());
}

// What a file that is not a regular one is, for errors: "a directory", "a FIFO", ...
const char* file_kind(mode_t mode);

// ---- reading ----

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
