// atomic_file.cpp - see atomic_file.h.
#include "atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "../core/error.h"

namespace heed {

namespace {
std::string errno_text() { return std::strerror(errno); }
}  // namespace

void write_file_atomically(const char* op, const std::string& path, const std::vector<uint8_t>& bytes) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(op, "cannot create '", tmp, "' to save '", path, "': ", errno_text());
  const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() && std::fflush(f) == 0 &&
                     fsync(fileno(f)) == 0;
  const std::string why = errno_text();
  if (std::fclose(f) != 0 || !wrote) {
    const std::string reason = wrote ? errno_text() : why;
    std::remove(tmp.c_str());
    fail(op, "cannot write '", tmp, "' to save '", path, "': ", reason);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string reason = errno_text();
    std::remove(tmp.c_str());
    fail(op, "cannot rename '", tmp, "' to '", path, "': ", reason);
  }
  // Make the rename itself durable (best effort: some filesystems refuse to open a dir).
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

std::vector<uint8_t> read_regular_file(const char* op, const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(op, "'", path, "': cannot open it: ", errno_text());
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const std::string why = errno_text();
    close(fd);
    fail(op, "'", path, "': cannot stat it: ", why);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    fail(op, "'", path, "': not a regular file");
  }
  std::vector<uint8_t> bytes(size_t(st.st_size));
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? errno_text() : "it ended early (changed while being read?)";
      close(fd);
      fail(op, "'", path, "': cannot read its ", bytes.size(), " bytes: ", why);
    }
    got += size_t(n);
  }
  uint8_t extra;
  const ssize_t more = read(fd, &extra, 1);
  close(fd);
  if (more != 0) fail(op, "'", path, "': it grew while being read");
  return bytes;
}

}  // namespace heed
