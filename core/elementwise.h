// elementwise.h - the two loops every elementwise op is built from.
//
//   map(x, f)         y[i] = f(x[i])                        y: x.shape
//   zip(op, a, b, f)  y[i] = f(a[i'], b[i''])               y: broadcast(a.shape, b.shape)
//
// where i' and i'' are i with broadcast dims pinned to 0. They allocate the output,
// run in parallel above kGrainElementwise elements, and record nothing: autograd ops
// (autograd/arith.cpp, autograd/unary.cpp) call them for both forward and backward.
#pragma once
#include "parallel.h"
#include "shape.h"
#include "tensor.h"

namespace heed {

template <class F>
Tensor map(const Tensor& x, const F& f) {
  Tensor y = empty(x.shape());
  const real* px = x.data();
  real* py = y.data();
  parallel_for(x.numel(), kGrainElementwise, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) py[i] = f(px[i]);
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
    for (int64_t i = s; i < e; ++i) py[i] = f(pa[i], pb[i], pc[i]);
  });
  return y;
}

// Strides of `s` seen from a broadcast shape `out` of rank >= s.size(): 0 on broadcast dims.
inline Shape broadcast_strides(const Shape& s, const Shape& out) {
  Shape st = out;
  const Shape cs = contiguous_strides(s);
  const int off = out.size() - s.size();
  for (int i = 0; i < out.size(); ++i) st[i] = (i < off || s[i - off] == 1) ? 0 : cs[i - off];
  return st;
}

template <class F>
Tensor zip(const char* op, const Tensor& a, const Tensor& b, const F& f) {
  const Shape out = a.shape() == b.shape() ? a.shape() : broadcast_shapes(op, a.shape(), b.shape());
  Tensor y = empty(out);
  const real *pa = a.data(), *pb = b.data();
  real* py = y.data();
  const int64_t n = y.numel();
  if (n == 0) return y;
  if (a.numel() == n && b.numel() == n) {  // same shape (or only 1-dims differ)
    parallel_for(n, kGrainElementwise, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) py[i] = f(pa[i], pb[i]);
    });
  } else if (b.numel() == 1) {
    const real vb = pb[0];
    parallel_for(n, kGrainElementwise, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) py[i] = f(pa[i], vb);
    });
  } else if (a.numel() == 1) {
    const real va = pa[0];
    parallel_for(n, kGrainElementwise, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) py[i] = f(va, pb[i]);
    });
  } else {
    // General case: walk rows of the last dim; each row's start is found by decomposing
    // the row number over the leading dims.
    const Shape sa = broadcast_strides(a.shape(), out), sb = broadcast_strides(b.shape(), out);
    const int r = out.size();
    const int64_t inner = out[r - 1], rows = n / inner;
    const int64_t ia = sa[r - 1], ib = sb[r - 1];
    parallel_for(rows, kGrainElementwise / (inner + 1) + 1, [&](int64_t s, int64_t e) {
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
        if (ia == 1 && ib == 1)
          for (int64_t j = 0; j < inner; ++j) ry[j] = f(ra[j], rb[j]);
        else if (ia == 1)
          for (int64_t j = 0; j < inner; ++j) ry[j] = f(ra[j], rb[0]);
        else if (ib == 1)
          for (int64_t j = 0; j < inner; ++j) ry[j] = f(ra[0], rb[j]);
        else
          for (int64_t j = 0; j < inner; ++j) ry[j] = f(ra[0], rb[0]);
      }
    });
  }
  return y;
}

}  // namespace heed
