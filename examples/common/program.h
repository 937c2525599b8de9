// program.h - the main() every example shares: options, --help, threads, the output
// directory, and one-line errors.
//
//   int main(int argc, char** argv) {
//     return program::run("translate", kUsage, argc, argv, parse_options, [&](const Options& o) { ... });
//   }
//
// parse(argc, argv, help) returns the options (with fields `threads` and `out`); an
// args::UsageError becomes "name: message (see --help)" and exit status 2. Then the thread
// count is set (0: leave OpenMP's default, every core), the --out directory is made (one
// level) and checked writable, one line names heed's version and the CPU level its kernels
// run at (heed::cpu_capability(); HEED_CPU forces a lower one), and body(options) runs; any exception it throws (a heed::Error
// from a bad checkpoint, an unreadable file, a PNG that cannot be written) becomes
// "name: message" and exit status 2. Nothing escapes as a crash.
#pragma once
#include <heed/heed.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "args.h"

namespace program {

template <class Parse, class Body>
int run(const char* name, const char* usage, int argc, char** argv, Parse parse, Body body) {
  decltype(parse(argc, argv, std::declval<bool&>())) o;
  try {
    bool help = false;
    o = parse(argc, argv, help);
    if (help) return std::printf("%s", usage), 0;
  } catch (const args::UsageError& e) {
    std::fprintf(stderr, "%s: %s (see --help)\n", name, e.what());
    return 2;
  }
  try {
    if (o.threads > 0) heed::set_num_threads(o.threads);
    ::mkdir(o.out.c_str(), 0755);
    if (::access(o.out.c_str(), W_OK) != 0) throw std::runtime_error("cannot write into --out directory " + o.out);
    std::printf("%s: heed %s, kernels for %s\n", name, heed::version(), heed::cpu_capability());
    return body(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 2;
  }
}

// The smoke runs' test that training did something: the mean of the last n losses is below
// `ratio` times the mean of the first n (n = min(max_n, half the run)). Sets first and last.
inline bool loss_falls(const std::vector<double>& losses, double ratio, double& first, double& last, size_t max_n = 10) {
  const size_t n = std::min(max_n, losses.size() / 2);
  first = last = 0;
  for (size_t i = 0; i < n; ++i) first += losses[i] / n, last += losses[losses.size() - 1 - i] / n;
  return n > 0 && last < ratio * first;
}

}  // namespace program
