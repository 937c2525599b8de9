// broadcast.cpp - expand and sum_to, and the raw kernels under them: the sum over one dim
// (which sum in reduce.cpp also runs) and the broadcast copy.
//
// A reduction over dim d sees x as (outer, n, inner): outer = prod(dims before d),
// n = x.size(d), inner = prod(dims after d), and writes out[o, i] = sum_k x[o, k, i].
#include "broadcast.h"

#include "../../core/elementwise.h"
#include "../../core/error.h"
#include "../engine/node.h"
#include "reduce_util.h"

namespace heed {

namespace detail {

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
    sum_row_blocks<real>(po, px, sp.outer, sp.n, sp.inner);
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

}  // namespace detail

namespace {

using detail::expand_raw;
using detail::sum_dim_raw;

// Sum x down to `shape` (no graph): leading extra dims, then dims where shape has 1.
Tensor sum_to_raw(Tensor x, const Shape& shape) {
  while (x.dim() > shape.size()) x = sum_dim_raw(x, 0, false);
  for (int d = 0; d < shape.size(); ++d)
    if (shape[d] == 1 && x.shape()[d] != 1) x = sum_dim_raw(x, d, true);
  return x;
}

}  // namespace

// y = x summed down to `shape`    dx = dy broadcast back up
Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  HEED_CHECK(broadcast_shapes("sum_to", shape, x.shape()) == x.shape(), "sum_to", "cannot sum ",
             x.shape(), " down to ", shape);
  Tensor y = sum_to_raw(x, shape).reshape(shape);
  return record("sum_to", y, {x}, kDoubleBackward, [s = x.shape()](const Tensor& dy, Grads& g) {
    g[0] = expand(dy, s);
  });
}

// `to` with each -1 replaced by the size of x's dim it stands over, as PyTorch's expand
// (-1 keeps a dim): refused on a new leading dim, which has no size to keep. (A Shape holds
// no other negative size.)  expand((3, 1), (2, -1, 4)) -> (2, 3, 4)
static Shape expand_target(const Shape& from, Shape to) {
  const int off = to.size() - from.size();  // new leading dims
  for (int i = 0; i < to.size(); ++i) {
    if (to[i] != -1) continue;
    HEED_CHECK(i >= off, "expand", "size -1 at dim ", i, " of ", to, " is on a new leading dim, "
               "which has no size to keep (expanding ", from, " adds ", off, " leading dim(s))");
    to[i] = from[i - off];
  }
  return to;
}

// y = x broadcast to `shape`      dx = sum_to(dy, x.shape)
Tensor expand(const Tensor& x, const Shape& to) {
  const Shape shape = expand_target(x.shape(), to);
  if (x.shape() == shape) return x;
  Tensor y = expand_raw(x, shape);
  detail::mark_view(y, "expand", -1, false);  // a copy where libtorch's would be a view
  return record("expand", y, {x}, kDoubleBackward, [s = x.shape()](const Tensor& dy, Grads& g) {
    g[0] = sum_to(dy, s);
  });
}

}  // namespace heed
