// reduce.cpp - sum, mean, sum_to, expand (max/min/argmax/var are in reduce_minmax.cpp).
//
// A reduction over dim d sees x as (outer, n, inner): outer = prod(dims before d),
// n = x.size(d), inner = prod(dims after d), and writes out[o, i] = sum_k x[o, k, i].
#include "reduce.h"

#include <algorithm>
#include <vector>

#include "../core/elementwise.h"
#include "../core/error.h"
#include "arith.h"
#include "node.h"
#include "reduce_util.h"

namespace heed {

namespace {

using detail::Split;
using detail::split_at;
using detail::reduced_shape;

// out[o, i] = sum_k x[o, k, i]        (no graph)
Tensor sum_dim_raw(const Tensor& x, int d, bool keepdim) {
  const Split sp = split_at(x.shape(), d);
  Tensor out = empty(reduced_shape(x.shape(), d, keepdim));
  const real* px = x.data();
  real* po = out.data();
  if (sp.inner == 1) {  // contiguous rows: a vectorised row_sum each (core/elementwise.h)
    parallel_for(sp.outer, kGrainElementwise / (sp.n + 1) + 1, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) po[o] = real(row_sum(px + o * sp.n, sp.n));
    });
  } else {  // whole rows of length inner added in blocks (reduce_util.h)
    detail::sum_row_blocks<real>(po, px, sp.outer, sp.n, sp.inner);
  }
  return out;
}

// Broadcast copy of x up to `shape` (no graph). A one-element x (sum's backward) is a fill.
Tensor expand_raw(const Tensor& x, const Shape& shape) {
  HEED_CHECK(broadcast_shapes("expand", x.shape(), shape) == shape, "expand", "cannot expand ",
             x.shape(), " to ", shape);
  if (x.shape() == shape) return x;
  if (x.numel() == 1) return full(shape, x.data()[0]);
  return zip("expand", x, empty(shape), [](real u, real) { return u; });
}

// Sum x down to `shape` (no graph): leading extra dims, then dims where shape has 1.
Tensor sum_to_raw(Tensor x, const Shape& shape) {
  while (x.dim() > shape.size()) x = sum_dim_raw(x, 0, false);
  for (int d = 0; d < shape.size(); ++d)
    if (shape[d] == 1 && x.shape()[d] != 1) x = sum_dim_raw(x, d, true);
  return x;
}

}  // namespace

// y = sum_i x_i                  dx_i = dy
// Up to kPieces pieces of at least kGrainElementwise elements are summed in parallel
// (row_sum each), then the pieces in order: the result does not depend on the thread count.
Tensor sum(const Tensor& x) {
  constexpr int64_t kPieces = 64;
  const real* px = x.data();
  const int64_t n = x.numel();
  const int64_t pieces = std::min(kPieces, (n + kGrainElementwise - 1) / kGrainElementwise);
  const int64_t len = pieces > 0 ? (n + pieces - 1) / pieces : 0;
  double part[kPieces];
  parallel_for(pieces, 2, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t lo = std::min(n, p * len), hi = std::min(n, lo + len);
      part[p] = row_sum(px + lo, hi - lo);
    }
  });
  double total = 0;
  for (int64_t p = 0; p < pieces; ++p) total += part[p];
  Tensor y = scalar_tensor(real(total));
  return record("sum", y, {x}, [s = x.shape()](const Tensor& dy, Grads& g) {
    g[0] = expand_raw(dy, s);
  });
}

// y[o, i] = sum_k x[o, k, i]      dx[o, k, i] = dy[o, i]
Tensor sum(const Tensor& x, int64_t dim, bool keepdim) {
  const int d = wrap_dim("sum", dim, x.dim());
  if (x.dim() == 0) return clone(x);
  Tensor y = sum_dim_raw(x, d, keepdim);
  return record("sum", y, {x}, [s = x.shape(), d](const Tensor& dy, Grads& g) {
    Shape kept = s;
    kept[d] = 1;
    g[0] = expand_raw(dy.reshape(kept), s);
  });
}

// y = sum(x) / n                  dx = dy / n
Tensor mean(const Tensor& x) {
  HEED_CHECK(x.numel() > 0, "mean", "mean of an empty tensor of shape ", x.shape());
  return sum(x) * (real(1) / real(x.numel()));
}

Tensor mean(const Tensor& x, int64_t dim, bool keepdim) {
  const int d = wrap_dim("mean", dim, x.dim());
  const int64_t n = x.dim() == 0 ? 1 : x.shape()[d];
  HEED_CHECK(n > 0, "mean", "mean over an empty dim ", dim, " of shape ", x.shape());
  return sum(x, dim, keepdim) * (real(1) / real(n));
}

// y = x summed down to `shape`    dx = dy broadcast back up
Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  HEED_CHECK(broadcast_shapes("sum_to", shape, x.shape()) == x.shape(), "sum_to", "cannot sum ",
             x.shape(), " down to ", shape);
  Tensor y = sum_to_raw(x, shape).reshape(shape);
  return record("sum_to", y, {x}, [s = x.shape()](const Tensor& dy, Grads& g) {
    g[0] = expand(dy, s);
  });
}

// y = x broadcast to `shape`      dx = sum_to(dy, x.shape)
Tensor expand(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  Tensor y = expand_raw(x, shape);
  return record("expand", y, {x}, [s = x.shape()](const Tensor& dy, Grads& g) {
    g[0] = sum_to(dy, s);
  });
}

}  // namespace heed
