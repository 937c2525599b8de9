// test_sanitizer.cpp - proof that AddressSanitizer sees inside heed's caching allocator.
// Only meaningful in `make sanitize` (the cases exist only when compiled with
// -fsanitize=address): a read one element past a tensor's end, or of a freed tensor's
// buffer that the cache still holds, must be reported, not read silently.
#include "helpers.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

using namespace heed;

// Runs `f` in a child process with stderr captured; returns what it printed and whether
// it died with a failure status (ASan aborts the child on the first report).
template <class F>
static std::pair<bool, std::string> run_in_child(const F& f) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    f();
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  return {failed, out};
}

TEST_CASE("ASan: the slack past a tensor's end and a freed buffer are poisoned") {
  Tensor t = zeros({5});  // 20 bytes in a 64-byte block
  CHECK_FALSE(__asan_address_is_poisoned(t.data() + 4));
  CHECK(__asan_address_is_poisoned(t.data() + 5));
  real* freed;
  {
    Tensor u = ones({1000});
    freed = u.data();
    CHECK_FALSE(__asan_address_is_poisoned(freed + 999));
  }  // back in the cache, not the system
  CHECK(__asan_address_is_poisoned(freed));
  CHECK(__asan_address_is_poisoned(freed + 999));
}

TEST_CASE("ASan: reading one element past a tensor's end is caught") {
  auto [failed, err] = run_in_child([] {
    Tensor t = ones({7});
    volatile real x = t.data()[7];
    (void)x;
  });
  CHECK(failed);
  CHECK(err.find("AddressSanitizer") != std::string::npos);
}

TEST_CASE("ASan: reading a freed tensor's buffer is caught") {
  auto [failed, err] = run_in_child([] {
    real* p;
    {
      Tensor t = ones({256});
      p = t.data();
    }
    volatile real x = p[3];
    (void)x;
  });
  CHECK(failed);
  CHECK(err.find("AddressSanitizer") != std::string::npos);
}
#endif
