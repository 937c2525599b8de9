// atomic_file.cpp - see atomic_file.h: atomic writes, then reads of regular files.
#include "atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "error.h"

namespace heed {

namespace {

std::string errno_text() { return std::strerror(errno); }

std::string dir_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// Step 1 and 2 of atomic_file.h: the file `path` names, after every symlink on the way; an
// existing one must be regular. A name that does not exist yet (or a dangling link's target)
// is returned as it is: it will be created.
std::string resolve_target(const char* op, const std::string& path) {
  std::string p = path;
  for (int links = 0;; ++links) {
    struct stat st;
    if (lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) return p;
      fail(op, "'", path, "': cannot stat '", p, "': ", errno_text());
    }
    if (S_ISREG(st.st_mode)) return p;
    if (!S_ISLNK(st.st_mode))
      fail(op, "'", path, "': ", p == path ? "it" : "its target '" + p + "'", " is ", file_kind(st.st_mode),
           ", not a regular file: refusing to replace it");
    if (links == 40) fail(op, "'", path, "': more than 40 symlinks to follow (a loop?)");
    std::string target(size_t(st.st_size) + 1, '\0');
    const ssize_t n = readlink(p.c_str(), &target[0], target.size());
    if (n < 0) fail(op, "'", path, "': cannot read the symlink '", p, "': ", errno_text());
    target.resize(size_t(n));
    p = target[0] == '/' ? target : dir_of(p) + "/" + target;
  }
}

// Writes all n bytes to fd, retrying short writes and interruptions.
bool write_all(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w, n -= size_t(w);
  }
  return true;
}

}  // namespace

void write_file_atomically(const char* op, const std::string& path, const void* bytes, size_t n) {
  static std::atomic<uint64_t> counter{0};
  const std::string target = resolve_target(op, path);
  const std::string tmp = target + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  // O_EXCL: never write through something already at the temporary's name.
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail(op, "cannot create '", tmp, "' to save '", path, "': ", errno_text());
  const bool wrote = write_all(fd, static_cast<const uint8_t*>(bytes), n) && fsync(fd) == 0;
  const std::string why = errno_text();
  if (close(fd) != 0 || !wrote) {
    const std::string reason = wrote ? errno_text() : why;
    unlink(tmp.c_str());
    fail(op, "cannot write '", tmp, "' to save '", path, "': ", reason);
  }
  if (rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string reason = errno_text();
    unlink(tmp.c_str());
    fail(op, "cannot rename '", tmp, "' to '", target, "': ", reason);
  }
  // Make the rename itself durable (best effort: some filesystems refuse to open a dir).
  const int dir = open(dir_of(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    fsync(dir);
    close(dir);
  }
}

const char* file_kind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// ---- reading ----

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
