// vectorised_probe.cpp - compiled by `make check-vectorised` (part of `make test`), never run.
// Each loop below calls one core/fastmath.h function, as heed's kernels do; the check compiles
// this file with the library's own flags and -fopt-info-vec-optimized and fails unless GCC
// reports every marked loop vectorised. (A flag change once left them all scalar, several
// times slower on loops like those of bench_core's exp_1M_fwd and tanh_1M_fwd_bwd rows,
// and every test still passed: speed is not a test, but this is a property of the build.)
// The last loops run inside run_avx2 / run_avx512 (core/cpu.h), as core/elementwise.h's loops
// do: their copies for those levels must vectorise too.
#include "../core/cpu.h"
#include "../core/fastmath.h"

namespace fm = heed::fastmath;

void probe_exp(const float* __restrict x, float* __restrict y, long n) {
  for (long i = 0; i < n; ++i) y[i] = fm::exp(x[i]);  // VECTORISE
}
void probe_expm1(const float* __restrict x, float* __restrict y, long n) {
  for (long i = 0; i < n; ++i) y[i] = fm::expm1(x[i]);  // VECTORISE
}
void probe_log(const float* __restrict x, float* __restrict y, long n) {
  for (long i = 0; i < n; ++i) y[i] = fm::log(x[i]);  // VECTORISE
}
void probe_tanh(const float* __restrict x, float* __restrict y, long n) {
  for (long i = 0; i < n; ++i) y[i] = fm::tanh(x[i]);  // VECTORISE
}
void probe_sigmoid_in_place(float* y, long n) {  // the recurrent layers' gates work in place
  for (long i = 0; i < n; ++i) y[i] = fm::sigmoid(y[i]);  // VECTORISE
}
void probe_erf(const float* __restrict x, float* __restrict y, long n) {
  for (long i = 0; i < n; ++i) y[i] = fm::erf(x[i]);  // VECTORISE
}
void probe_gelu_avx2(const float* __restrict x, float* __restrict y, long n) {
  heed::run_avx2([&] {
    for (long i = 0; i < n; ++i) y[i] = x[i] * fm::normal_cdf(x[i]);  // VECTORISE
  });
}
void probe_tanh_avx512(const float* __restrict x, float* __restrict y, long n) {
  heed::run_avx512([&] {
    for (long i = 0; i < n; ++i) y[i] = fm::tanh(x[i]);  // VECTORISE
  });
}
