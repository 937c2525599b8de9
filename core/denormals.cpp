// denormals.cpp - FTZ/DAZ on every thread heed computes on (denormals.h).
#include "denormals.h"

#include "parallel.h"

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace heed {

#if defined(__SSE__)
namespace {
constexpr unsigned kFlushToZero = 1u << 15;      // MXCSR.FTZ: denormal results become 0
constexpr unsigned kDenormalsAreZero = 1u << 6;  // MXCSR.DAZ: denormal inputs read as 0
constexpr unsigned kFlush = kFlushToZero | kDenormalsAreZero;

void set_this_thread(bool on) {
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(on ? csr | kFlush : csr & ~kFlush);
}
}  // namespace

bool set_flush_denormals(bool on) {
  set_this_thread(on);  // first: workers created from here on copy it
#ifdef _OPENMP
  // Every thread of the pool a team of get_num_threads() uses: a region of n threads runs
  // its body once on each (libgomp forms the full team unless OMP_DYNAMIC=true is set).
#pragma omp parallel num_threads(get_num_threads())
  set_this_thread(on);
#endif
  return true;
}

bool get_flush_denormals() { return (_mm_getcsr() & kFlush) == kFlush; }

#else

bool set_flush_denormals(bool) { return false; }
bool get_flush_denormals() { return false; }

#endif

}  // namespace heed
