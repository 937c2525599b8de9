// reduce.cpp - sum and mean (max/min/argmax/var are in reduce_minmax.cpp). The sum over one
// dim without the graph, and the broadcast copy sum's backward is, are broadcast.cpp's.
#include "reduce.h"

#include <algorithm>
#include <vector>

#include "../../core/elementwise.h"
#include "../../core/error.h"
#include "../engine/node.h"
#include "arith.h"

namespace heed {

namespace {

using detail::expand_raw;
using detail::sum_dim_raw;

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
  return record("sum", y, {x}, kDoubleBackward, [s = x.shape()](const Tensor& dy, Grads& g) {
    g[0] = g.create_graph() ? expand(dy, s) : expand_raw(dy, s);
  });
}

// y[o, i] = sum_k x[o, k, i]      dx[o, k, i] = dy[o, i]
Tensor sum(const Tensor& x, int64_t dim, bool keepdim) {
  const int d = wrap_dim("sum", dim, x.dim());
  if (x.dim() == 0) return clone(x);
  Tensor y = sum_dim_raw(x, d, keepdim);
  return record("sum", y, {x}, kDoubleBackward, [s = x.shape(), d](const Tensor& dy, Grads& g) {
    Shape kept = s;
    kept[d] = 1;
    g[0] = g.create_graph() ? expand(dy.reshape(kept), s) : expand_raw(dy.reshape(kept), s);
  });
}

// y = sum(x) / n                  dx = dy / n
Tensor mean(const Tensor& x) {
  HEED_CHECK(x.numel() > 0, "mean", "mean of an empty tensor of shape ", x.shape());
  return named("mean", sum(x) * (real(1) / real(x.numel())), {x});
}

Tensor mean(const Tensor& x, int64_t dim, bool keepdim) {
  const int d = wrap_dim("mean", dim, x.dim());
  const int64_t n = x.dim() == 0 ? 1 : x.shape()[d];
  HEED_CHECK(n > 0, "mean", "mean over an empty dim ", dim, " of shape ", x.shape());
  return named("mean", sum(x, dim, keepdim) * (real(1) / real(n)), {x});
}

}  // namespace heed
