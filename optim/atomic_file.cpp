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

// What a path that is not a regular file is, for the error message.
static const char* file_kind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

RegularFile::RegularFile(const char* op, const std::string& path) : op_(op), path_(path) {
  fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) fail(op, "'", path, "': cannot open it: ", errno_text());
  struct stat st;
  if (fstat(fd_, &st) != 0) {
    const std::string why = errno_text();
    close(fd_);
    fail(op, "'", path, "': cannot stat it: ", why);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd_);
    fail(op, "'", path, "': not a regular file: it is ", file_kind(st.st_mode));
  }
  size_ = uint64_t(st.st_size);
}

RegularFile::~RegularFile() { close(fd_); }

size_t RegularFile::read_at(uint8_t* p, size_t n, uint64_t offset) const {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = pread(fd_, p + got, n - got, off_t(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail(op_, "'", path_, "': cannot read it: ", errno_text());
    if (r == 0) break;
    got += size_t(r);
  }
  return got;
}

std::vector<uint8_t> RegularFile::read_exactly(uint64_t n) const {
  std::vector<uint8_t> bytes(n);
  uint8_t extra;
  if (read_at(bytes.data(), n, 0) != n || read_at(&extra, 1, n) != 0)
    fail(op_, "'", path_, "': it changed size while being read (", n, " bytes expected)");
  return bytes;
}

std::vector<uint8_t> read_regular_file(const char* op, const std::string& path) {
  const RegularFile f(op, path);
  return f.read_exactly(f.size());
}

}  // namespace heed
