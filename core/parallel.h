// parallel.h - OpenMP parallel loops with a size threshold, and the thread count.
//
// parallel_for(n, grain, f) calls f(begin, end) on contiguous chunks of [0, n). Below
// `grain` total work it runs f(0, n) on the calling thread, so tiny tensors do not pay
// OpenMP start-up. Chunks are contiguous so the body's inner loop vectorises. If f throws
// (a scratch buffer it allocates), the other chunks still run and parallel_for rethrows the
// first exception on the caller.
//
// OpenBLAS is the OpenMP build (libopenblas-openmp-dev): it shares OpenMP's pool, follows
// the calling thread's omp_get_max_threads(), and runs single-threaded inside a parallel
// region, so BLAS and heed's own loops never oversubscribe the cores.
//
// Threads on a shared machine. A parallel region is only as fast as its slowest thread: when
// another process holds a core, the second thread waits for a time slice and every region,
// and every GEMM, waits for it. Worse, libgomp's idle threads keep spinning after each
// region (GOMP_SPINCOUNT 300000 unless OMP_WAIT_POLICY is set), taking the core from the
// thread doing the work. On 2 cores kept busy by other processes, a seq2seq step took
// several times as long at 2 threads as at 1: `make bench` step 4 (`bench_models --busy`,
// its seq2seq row) times the default against one thread with a core taken, and with
// HEED_DYNAMIC_THREADS=0 it times the fixed two threads.
// So heed sizes its teams the way OMP_DYNAMIC intends, but from the run queue as it is now
// rather than libgomp's 15-minute load average:
//
//   threads = clamp(cores - (runnable threads of other processes), 1, set_num_threads)
//
// sampled at most every 50 ms from /proc/loadavg (the kernel's nr_running) minus this
// process's own running threads (/proc/self/task/*/stat). The count is applied with
// omp_set_num_threads on the calling thread, so heed's own regions follow it. It sizes only
// work whose bits do not depend on the split (threads_now() below); GEMMs always run on the
// count the user set (gemm_threads()), since the libraries' K splits follow the team's size
// and the same product must give the same bits whatever the load.
// libgomp reads OMP_WAIT_POLICY once, in its own constructor, before any code of a program
// linked with libheed.a runs (even .preinit_array: libc's start-up resets the environment
// after it), so heed cannot change the spinning from inside; with dynamic threads the
// spinning stops mattering because a loaded machine gets one thread and no idle workers.
//
// Overrides (see README, "Threads"):
//   heed::set_num_threads(n) / OMP_NUM_THREADS=n   the most threads heed and BLAS use
//   heed::set_dynamic_threads(false) / HEED_DYNAMIC_THREADS=0
//                                 always use that many (a dedicated box; results are the
//                                 same bits either way)
//   OMP_WAIT_POLICY=passive       libgomp's idle threads sleep at once instead of spinning
#pragma once
#include <cstdint>
#include <exception>
#include <mutex>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace heed {

// The most threads set_num_threads accepts: 1024. PyTorch takes any positive count, but
// libgomp aborts the whole process (not an exception) when it cannot create a team's threads,
// and a team of INT32_MAX would ask for that; 1024 is past any CPU's hardware threads that
// heed targets (oversubscribing cores only slows CPU-bound kernels), and leaves room for
// tests that oversubscribe on purpose. A fixed number, not a multiple of the cores, so a
// program that runs on one machine is accepted on every machine.
constexpr int kMaxThreads = 1024;

// The most threads heed and BLAS may use, in [1, kMaxThreads] (heed::Error otherwise, naming
// the count). Default: OMP_NUM_THREADS, or the cores; an OMP_NUM_THREADS above kMaxThreads
// is a heed::Error naming it at the first parallel region or thread query.
void set_num_threads(int n);
int get_num_threads();
// Dynamic threads: use fewer threads while other processes keep cores busy. Off: always
// get_num_threads(). HEED_DYNAMIC_THREADS=0 turns it off and =1 on (the default when unset);
// any other value is a heed::Error naming it at the first parallel region or thread query.
void set_dynamic_threads(bool on);
bool get_dynamic_threads();

namespace detail {
// The threads a parallel region started now should use: 1 inside a parallel region, else
// get_num_threads() reduced by the load (re-sampled at most every 50 ms when dynamic). Only
// for work whose result does not depend on how it is split: element-wise loops, rows or
// panels each computed whole by one thread, sums over a fixed number of pieces.
int threads_now();
// The threads for a GEMM (core/blas.h): 1 inside a parallel region, else get_num_threads(),
// never reduced by the load. oneDNN and OpenBLAS split long sums over K between threads for
// some shapes (dnnl_sgemm at M = 1 and K >= 384, OpenBLAS at K = 3000, with 1 thread against
// 2), so the team's size is part of a product's result: it must follow what the user set, not
// the machine's load. Sets omp_set_num_threads on the calling thread, which both libraries
// read.
int gemm_threads();
// HEED_DYNAMIC_THREADS's meaning: nullptr or "1" true, "0" false, anything else a heed::Error.
bool dynamic_threads_setting(const char* env);
}  // namespace detail

// Elements before a loop goes parallel. A parallel region has a fixed cost (fork, join, the
// second core's cache), so a loop should hold several times that much work first. Timing
// each loop alone, serial against 2 threads, the second thread began to pay between 16K and
// 32K elements for mul (memory-bound) and by 2K-8K for fastmath::tanh (far more work per
// element). No `make bench` row times a loop at its grain; bench_core's
// add_bcast_1024x1024_fwd and tanh_1M_fwd_bwd rows time such loops well above it.
// Loops of cheap arithmetic use kGrainElementwise; loops that evaluate exp, tanh, erf...
// per element use kGrainTranscendental.
constexpr int64_t kGrainElementwise = 32768;
constexpr int64_t kGrainTranscendental = 4096;

namespace detail {
// The first exception any thread of a parallel region caught, to rethrow on the caller after
// the region: one leaving an OpenMP region would call std::terminate.
class FirstError {
 public:
  template <class G>
  void run(const G& g) {  // g(), keeping what it throws if nothing was kept before
    try {
      g();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!first_) first_ = std::current_exception();
    }
  }
  bool caught() {
    std::lock_guard<std::mutex> lock(mu_);
    return bool(first_);
  }
  void rethrow() const {  // after the region
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mu_;
  std::exception_ptr first_;
};
}  // namespace detail

template <class F>
void parallel_for(int64_t n, int64_t grain, const F& f) {
  if (n <= 0) return;
#ifdef _OPENMP
  const int threads = n >= grain ? detail::threads_now() : 1;
  if (threads > 1) {
    detail::FirstError error;
#pragma omp parallel num_threads(threads)
    {
      const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
      const int64_t chunk = (n + nt - 1) / nt;
      const int64_t b = t * chunk, e = b + chunk < n ? b + chunk : n;
      if (b < e) error.run([&] { f(b, e); });
    }
    error.rethrow();
    return;
  }
#endif
  f(int64_t{0}, n);
}

// run_team(nt, f) calls f(team) once on each of team.size <= nt threads at once, team.rank =
// 0 .. size-1, for work split by hand whose phases meet at team.barrier(): the recurrent
// layers run a whole sequence in one region, each thread owning some hidden units, with a
// barrier per time step instead of a fork and a join per step. nt <= 1, or a call from inside
// a parallel region, runs f on the caller alone (size 1, where barrier() does nothing).
//
// Exceptions. One escaping an OpenMP region ends the program (std::terminate), and a thread
// that left early would leave the others waiting at the next barrier forever. So f does what
// may throw (allocating its buffers) inside team.prepare(g), before its first barrier:
// prepare runs g on every thread, then meets; if any g threw, prepare returns false on every
// thread, f returns, and run_team rethrows the first exception on the caller. Past prepare,
// f must not throw.
struct Team {
  int rank = 0, size = 1;
  detail::FirstError* error = nullptr;  // run_team's, shared by the team
  void barrier() const {
#ifdef _OPENMP
    if (size > 1) {
#pragma omp barrier
    }
#endif
  }
  // Runs g() on this thread, then waits for the team: true when no thread's g threw. Every
  // thread of the team calls it, at the same point.
  template <class G>
  bool prepare(const G& g) const {
    error->run(g);
    barrier();
    return !error->caught();
  }
};

template <class F>
void run_team(int nt, const F& f) {
  detail::FirstError error;
#ifdef _OPENMP
  if (nt > 1 && !omp_in_parallel()) {
#pragma omp parallel num_threads(nt)
    f(Team{omp_get_thread_num(), omp_get_num_threads(), &error});
  } else
#endif
    f(Team{0, 1, &error});
  error.rethrow();
}

}  // namespace heed
