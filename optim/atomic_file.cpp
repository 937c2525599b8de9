// atomic_file.cpp - see atomic_file.h.
#include "atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "../core/error.h"

namespace heed {

namespace {
std::string errno_text() { return std::strerror(errno); }
}  // namespace

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
