// parallel.h - OpenMP parallel loops with a size threshold, and the thread count.
//
// parallel_for(n, grain, f) calls f(begin, end) on contiguous chunks of [0, n). Below
// `grain` total work it runs f(0, n) on the calling thread, so tiny tensors do not pay
// OpenMP start-up. Chunks are contiguous so the body's inner loop vectorises.
//
// OpenBLAS is the OpenMP build (libopenblas-openmp-dev): it shares OpenMP's pool and
// runs single-threaded when called inside a parallel region, so BLAS and heed's own
// loops never oversubscribe the cores. set_num_threads(n) sets both.
#pragma once
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace heed {

void set_num_threads(int n);
int get_num_threads();

// Elements before a loop goes parallel. A parallel region costs about 1 us on the 2-core
// machine heed is tuned on (fork, join, the second core's cache), so a loop should hold a
// few us of work first. Measured there, serial vs 2 threads:
//   mul (memory-bound, ~0.15 ns per element)   16K: 2.3 vs 2.4 us   32K: 4.6 vs 3.8 us
//   fastmath::tanh (~1.2 ns per element)        2K: 2.6 vs 2.1 us    8K: 10.2 vs 6.1 us
// Loops of cheap arithmetic use kGrainElementwise; loops that evaluate exp, tanh, erf...
// per element use kGrainTranscendental.
constexpr int64_t kGrainElementwise = 32768;
constexpr int64_t kGrainTranscendental = 4096;

template <class F>
void parallel_for(int64_t n, int64_t grain, const F& f) {
  if (n <= 0) return;
#ifdef _OPENMP
  if (n >= grain && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel
    {
      const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
      const int64_t chunk = (n + nt - 1) / nt;
      const int64_t b = t * chunk, e = b + chunk < n ? b + chunk : n;
      if (b < e) f(b, e);
    }
    return;
  }
#endif
  f(int64_t{0}, n);
}

}  // namespace heed
