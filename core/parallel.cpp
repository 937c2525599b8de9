// parallel.cpp - the thread count, and dynamic threads (see parallel.h).
#include "parallel.h"

#include <dirent.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "error.h"

extern "C" void openblas_set_num_threads(int);

namespace heed {

namespace {

struct Threads {
  std::atomic<int> requested{0};   // set_num_threads, or OpenMP's default; 0 before first use
  std::atomic<int> effective{0};   // what threads_now() returns outside parallel regions
  std::atomic<bool> dynamic{true};
  std::atomic<int64_t> next_sample_ns{0};
  std::mutex sampling;             // one thread samples at a time
};

Threads& state() {
  static Threads* s = [] {
    auto* t = new Threads;  // never destroyed: parallel loops may run during static destruction
#ifdef _OPENMP
    const int omp = omp_get_max_threads();  // OMP_NUM_THREADS, or the cores
    if (omp > kMaxThreads) {
      delete t;  // C++ runs this initializer again at the next call: each one is refused
      fail("set_num_threads", "OMP_NUM_THREADS gives ", omp, " threads, more than the ",
           kMaxThreads, " heed allows (core/parallel.h)");
    }
    t->requested = omp;
#else
    t->requested = 1;
#endif
    t->effective = t->requested.load();
    try {
      t->dynamic = detail::dynamic_threads_setting(std::getenv("HEED_DYNAMIC_THREADS"));
    } catch (...) {
      delete t;  // refused again at the next call, as OMP_NUM_THREADS above
      throw;
    }
    return t;
  }();
  return *s;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The kernel's count of runnable threads on the whole machine (the 4th field of
// /proc/loadavg, "running/total"), or -1 when it cannot be read.
int machine_running() {
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (!f) return -1;
  double a, b, c;
  int running = -1, total;
  if (std::fscanf(f, "%lf %lf %lf %d/%d", &a, &b, &c, &running, &total) != 5) running = -1;
  std::fclose(f);
  return running;
}

// This process's threads that are running or runnable (state R in /proc/self/task/*/stat),
// the caller included; idle OpenMP workers that spin count too.
int own_running() {
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return 1;
  int n = 0;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    char path[300], buf[256];
    std::snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    FILE* f = std::fopen(path, "r");
    if (!f) continue;
    const size_t len = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[len] = 0;
    const char* paren = std::strrchr(buf, ')');  // "tid (name) S ..."; the name may hold spaces
    if (paren && paren[1] == ' ' && paren[2] == 'R') ++n;
  }
  closedir(dir);
  return n > 0 ? n : 1;
}

// cores - (other processes' runnable threads), clamped to [1, requested].
int sample(int requested) {
  const int running = machine_running();
  if (running < 0) return requested;
#ifdef _OPENMP
  const int cores = omp_get_num_procs();
#else
  const int cores = 1;
#endif
  const int others = running - own_running();
  const int free_cores = cores - (others > 0 ? others : 0);
  return free_cores < 1 ? 1 : free_cores > requested ? requested : free_cores;
}

// A sample is three small /proc reads, a small fraction of the 50 ms between samples; it
// runs within every threaded op that `make bench` times (bench_models' cases).
constexpr int64_t kSampleEveryNs = 50'000'000;  // 50 ms

}  // namespace

void set_num_threads(int n) {
  HEED_CHECK(n >= 1, "set_num_threads", "need at least 1 thread, got ", n);
  HEED_CHECK(n <= kMaxThreads, "set_num_threads", n, " threads is more than the ", kMaxThreads,
             " heed allows (libgomp aborts the process when it cannot start a team)");
  Threads& s = state();
  s.requested = n;
  s.effective = n;
  s.next_sample_ns = 0;  // re-sample at the next region
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
  openblas_set_num_threads(n);
}

int get_num_threads() { return state().requested; }

void set_dynamic_threads(bool on) {
  Threads& s = state();
  s.dynamic = on;
  s.next_sample_ns = 0;
  if (!on) set_num_threads(s.requested);
}

bool get_dynamic_threads() { return state().dynamic; }

namespace detail {
bool dynamic_threads_setting(const char* env) {
  if (env == nullptr || std::strcmp(env, "1") == 0) return true;
  if (std::strcmp(env, "0") == 0) return false;
  fail("HEED_DYNAMIC_THREADS", "must be 0 (a fixed thread count) or 1 (dynamic), got '", env, "'");
}

int threads_now() {
#ifdef _OPENMP
  if (omp_in_parallel()) return 1;
#endif
  Threads& s = state();
  const bool sampled = s.dynamic && s.requested > 1;
  const int64_t t = sampled ? now_ns() : 0;
  if (sampled && t >= s.next_sample_ns && s.sampling.try_lock()) {
    s.next_sample_ns = t + kSampleEveryNs;
    const int n = sample(s.requested);
    s.sampling.unlock();
    s.effective = n;
  }
  const int n = sampled ? s.effective.load() : s.requested.load();
#ifdef _OPENMP
  // OpenBLAS and OpenMP regions follow the calling thread's own setting, which a thread the
  // program started after set_num_threads() does not have yet: set it on every path.
  if (omp_get_max_threads() != n) omp_set_num_threads(n);
#endif
  return n;
}

int gemm_threads() {
#ifdef _OPENMP
  const int n = omp_in_parallel() ? 1 : state().requested.load();
  if (omp_get_max_threads() != n) omp_set_num_threads(n);
  return n;
#else
  return 1;
#endif
}

}  // namespace detail

}  // namespace heed
