// atomic_write.h - the one way heed writes a file (checkpoints, safetensors, DOT graphs, the
// examples' PNGs): into the file the user named, whole or not at all.
//
//   heed::write_file_atomically("write_dot", "graph.dot", text);
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

void write_file_atomically(const char* op, const std::string& path, const void* bytes, size_t n);
inline void write_file_atomically(const char* op, const std::string& path, const std::vector<uint8_t>& bytes) {
  write_file_atomically(op, path, bytes.data(), bytes.size());
}
inline void write_file_atomically(const char* op, const std::string& path, const std::string& text) {
  write_file_atomically(op, path, text.data(), text.size());
}

// What a file that is not a regular one is, for errors: "a directory", "a FIFO", ...
const char* file_kind(mode_t mode);

}  // namespace heed
