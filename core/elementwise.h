// elementwise.h - the two loops every elementwise op is built from, and the row reductions
// that softmax-like kernels are built from.
//
//   map(x, f)         y[i] = f(x[i])                        y: x.shape
//   map_with_derivative(x, d, f)   the same, f also writing d[i] = f'(x[i])
//   zip(op, a, b, f)  y[i] = f(a[i'], b[i''])               y: broadcast(a.shape, b.shape)
//
// where i' and i'' are i with broadcast dims pinned to 0. They allocate the output,
// run in parallel above `grain` elements (kGrainElementwise unless given; pass
// kGrainTranscendental when f evaluates exp, tanh...), and record nothing: autograd ops
// (autograd/ops/arith.cpp, autograd/ops/unary.cpp) call them for both forward and backward.
// f is usually a fastmath:: function (core/fastmath.h), which the loops vectorise.
//
//   row_max(x, n)          max_k x[k], NaN if any x[k] is NaN
//   row_sum(x, n)          sum_k x[k]                  (in double)
//   row_dot(a, b, n)       sum_k a[k] b[k]             (in double)
//   row_sum_exp(x, n, m)   sum_k e^(x[k] - m)          (in double)
//   row_all_finite(x, n)   no x[k] is NaN or +-inf
// over one contiguous row, each a single vectorised pass (see "Row reductions" below).
#pragma once
#include <limits>

#include "cpu.h"
#include "fastmath.h"
#include "parallel.h"
#include "shape.h"
#include "tensor.h"

namespace heed {

namespace detail {

// The loops themselves: y[i] = f(a[i * IA], b[i * IB]) for i in [0, n), IA and IB 1 (walk
// the operand) or 0 (hold its one element). Each runs at the CPU's level (run_at_cpu_level,
// core/cpu.h: compiled for v2, AVX2 and AVX-512, f and all it calls inlined into each, since
// a loop that calls a function stays scalar).
template <int64_t IA, int64_t IB, class F>
void zip_loop(real* y, const real* a, const real* b, int64_t n, const F& f) {
  run_at_cpu_level([&] {
      for (int64_t i = 0; i < n; ++i) y[i] = f(a[i * IA], b[i * IB]);
  });
}

template <class F>
void map_loop(real* y, const real* x, int64_t n, const F& f) {
  run_at_cpu_level([&] {
      for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
  });
}

template <class F>
void map_d_loop(real* y, real* d, const real* x, int64_t n, const F& f) {
  run_at_cpu_level([&] {
      for (int64_t i = 0; i < n; ++i) y[i] = f(x[i], d[i]);
  });
}

template <class F>
void map3_loop(real* y, const real* a, const real* b, const real* c, int64_t n, const F& f) {
  run_at_cpu_level([&] {
      for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i], c[i]);
  });
}

}  // namespace detail

template <class F>
Tensor map(const Tensor& x, const F& f, int64_t grain = kGrainElementwise) {
  Tensor y = empty(x.shape());
  const real* px = x.data();
  real* py = y.data();
  parallel_for(x.numel(), grain, [&](int64_t b, int64_t e) {
    detail::map_loop(py + b, px + b, e - b, f);
  });
  return y;
}

// y[i] = f(x[i], d[i]) where f also writes d[i]: a function and its derivative in one pass
// (f(v, d) returns f(v) and sets d = f'(v)), for ops whose backward would otherwise
// evaluate the same transcendental again. d must have x's shape.
template <class F>
Tensor map_with_derivative(const Tensor& x, Tensor& d, const F& f, int64_t grain = kGrainElementwise) {
  Tensor y = empty(x.shape());
  d = empty(x.shape());
  const real* px = x.data();
  real *py = y.data(), *pd = d.data();
  parallel_for(x.numel(), grain, [&](int64_t b, int64_t e) {
    detail::map_d_loop(py + b, pd + b, px + b, e - b, f);
  });
  return y;
}

// Same-shape three-input loop (used by fused backward formulas): y[i] = f(a[i], b[i], c[i]).
template <class F>
Tensor map3(const Tensor& a, const Tensor& b, const Tensor& c, const F& f) {
  Tensor y = empty(a.shape());
  const real *pa = a.data(), *pb = b.data(), *pc = c.data();
  real* py = y.data();
  parallel_for(a.numel(), kGrainElementwise, [&](int64_t s, int64_t e) {
    detail::map3_loop(py + s, pa + s, pb + s, pc + s, e - s, f);
  });
  return y;
}

template <class F>
Tensor zip(const char* op, const Tensor& a, const Tensor& b, const F& f,
           int64_t grain = kGrainElementwise) {
  using detail::zip_loop;
  const Shape out = a.shape() == b.shape() ? a.shape() : broadcast_shapes(op, a.shape(), b.shape());
  Tensor y = empty(out);
  const real *pa = a.data(), *pb = b.data();
  real* py = y.data();
  const int64_t n = y.numel();
  if (n == 0) return y;
  if (a.numel() == n && b.numel() == n) {  // same shape (or only 1-dims differ)
    parallel_for(n, grain, [&](int64_t s, int64_t e) {
      zip_loop<1, 1>(py + s, pa + s, pb + s, e - s, f);
    });
  } else if (b.numel() == 1) {
    parallel_for(n, grain, [&](int64_t s, int64_t e) {
      zip_loop<1, 0>(py + s, pa + s, pb, e - s, f);
    });
  } else if (a.numel() == 1) {
    parallel_for(n, grain, [&](int64_t s, int64_t e) {
      zip_loop<0, 1>(py + s, pa, pb + s, e - s, f);
    });
  } else {
    // General case: walk rows of the last dim; each row's start is found by decomposing
    // the row number over the leading dims.
    const Shape sa = broadcast_strides(a.shape(), out), sb = broadcast_strides(b.shape(), out);
    const int r = out.size();
    const int64_t inner = out[r - 1], rows = n / inner;
    const int64_t ia = sa[r - 1], ib = sb[r - 1];
    parallel_for(rows, grain / (inner + 1) + 1, [&](int64_t s, int64_t e) {
      for (int64_t row = s; row < e; ++row) {
        int64_t oa = 0, ob = 0, rem = row;
        for (int d = r - 2; d >= 0; --d) {
          const int64_t k = rem % out[d];
          rem /= out[d];
          oa += k * sa[d];
          ob += k * sb[d];
        }
        const real *ra = pa + oa, *rb = pb + ob;
        real* ry = py + row * inner;
        if (ia == 1 && ib == 1) zip_loop<1, 1>(ry, ra, rb, inner, f);
        else if (ia == 1) zip_loop<1, 0>(ry, ra, rb, inner, f);
        else if (ib == 1) zip_loop<0, 1>(ry, ra, rb, inner, f);
        else zip_loop<0, 0>(ry, ra, rb, inner, f);
      }
    });
  }
  return y;
}

// ---------------------------------------------------------------- row reductions
//
// A running sum `s += x[k]` is a chain of dependent adds, and IEEE addition is not
// associative, so GCC keeps it serial (one element per add latency). Here each row is
// read kLanes elements at a time into kLanes running partials, side by side, which is a
// plain elementwise loop over the lanes that GCC vectorises; the lanes are combined at
// the end. (`#pragma GCC unroll 1` keeps GCC from unrolling the lane loop into straight-line
// code before the vectoriser sees it; unrolled, the selects of row_max become branches.)
//
// Sums accumulate in `real` within blocks of kSumBlock elements (16 terms per lane) and add
// the blocks in double, so their error stays that of a 16-term float sum per block,
// whatever the row length. Results do not depend on the thread count.

constexpr int kLanes = 16;
constexpr int64_t kSumBlock = 256;

// max_k x[k] over x[0, n); -inf for n = 0; NaN if any element is NaN (m > NaN is false, so
// a NaN never wins the max: the nan lanes catch it instead).
inline real row_max(const real* x, int64_t n) {
  constexpr real kNegInf = -std::numeric_limits<real>::infinity();
  real r = kNegInf;
  run_at_cpu_level([&] {
    real m[kLanes], nan[kLanes];
    for (int l = 0; l < kLanes; ++l) m[l] = kNegInf, nan[l] = 0;
    int64_t k = 0;
    for (; k + kLanes <= n; k += kLanes)
#pragma GCC unroll 1
      for (int l = 0; l < kLanes; ++l) {
        const real v = x[k + l];
        m[l] = v > m[l] ? v : m[l];
        nan[l] = v != v ? v : nan[l];
      }
    for (; k < n; ++k) {
      m[0] = x[k] > m[0] ? x[k] : m[0];
      nan[0] = x[k] != x[k] ? x[k] : nan[0];
    }
    for (int l = 0; l < kLanes; ++l) r = m[l] > r ? m[l] : r;
    for (int l = 0; l < kLanes; ++l) r = nan[l] != nan[l] ? nan[l] : r;
  });
  return r;
}

// sum_k f(k) over [0, n), f(k) a `real`: the blocked, laned loop shared by the sums below,
// at the CPU's level.
template <class F>
double row_accumulate(int64_t n, const F& f) {
  double total = 0;
  run_at_cpu_level([&] {
    for (int64_t b = 0; b < n; b += kSumBlock) {
      const int64_t e = b + kSumBlock < n ? b + kSumBlock : n;
      real acc[kLanes] = {};
      int64_t k = b;
      for (; k + kLanes <= e; k += kLanes)
#pragma GCC unroll 1
        for (int l = 0; l < kLanes; ++l) acc[l] += f(k + l);
      for (; k < e; ++k) acc[0] += f(k);
      for (int l = 0; l < kLanes; ++l) total += acc[l];
    }
  });
  return total;
}

// sum_k x[k]
inline double row_sum(const real* x, int64_t n) {
  return row_accumulate(n, [x](int64_t k) { return x[k]; });
}

// sum_k a[k] b[k]
inline double row_dot(const real* a, const real* b, int64_t n) {
  return row_accumulate(n, [a, b](int64_t k) { return a[k] * b[k]; });
}

// sum_k e^(x[k] - m). The exps of a block go to a small buffer first: a loop that both
// computes exp and accumulates lanes does not vectorise as well as the two apart.
inline double row_sum_exp(const real* x, int64_t n, real m) {
  real e[kSumBlock];
  double total = 0;
  for (int64_t b = 0; b < n; b += kSumBlock) {
    const int64_t len = b + kSumBlock < n ? kSumBlock : n - b;
    detail::map_loop(e, x + b, len, [m](real v) { return fastmath::exp(v - m); });
    total += row_sum(e, len);
  }
  return total;
}

// True when no x[k], k < n, is NaN or +-inf: x - x is 0 for a finite value and NaN for the
// others, and the laned sum of those differences stays 0 only if every one was finite (a
// branch-free pass; the plain form is std::all_of with std::isfinite, which GCC keeps serial).
inline bool row_all_finite(const real* x, int64_t n) {
  real bad = 0;
  run_at_cpu_level([&] {
    real acc[kLanes] = {};
    int64_t k = 0;
    for (; k + kLanes <= n; k += kLanes)
#pragma GCC unroll 1
      for (int l = 0; l < kLanes; ++l) acc[l] += x[k + l] - x[k + l];
    for (; k < n; ++k) acc[0] += x[k] - x[k];
    for (int l = 0; l < kLanes; ++l) bad += acc[l];
  });
  return bad == 0;
}

}  // namespace heed
