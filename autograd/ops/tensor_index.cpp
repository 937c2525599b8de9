// tensor_index.cpp - index and index_put over a strided region (tensor_index.h), and the
// methods x.index(I) and x.index_put_(I, v).
//
// An index list resolves to a Region (core/region.h); the gather reads its elements in
// row-major order, the put writes them. Strided slices never visit an element twice, so
// the put needs no accumulation.
#include "tensor_index.h"

#include <algorithm>
#include <cstring>

#include "../../core/error.h"
#include "../../core/region.h"
#include "../engine/node.h"
#include "broadcast.h"
#include "inplace.h"

namespace heed {

namespace {

using detail::Region;
using detail::resolve_region;
using indexing::TensorIndex;

// v's shape without the leading size-1 dims it has beyond the region's rank: PyTorch drops
// them before broadcasting the value of x[I] = v (slicePrefix1sDims in ATen's
// TensorIndexing.h), so a (1, 1, T, E/2) value fills a (T, E/2) region.
Shape value_shape(const Shape& v, const Shape& region) {
  Shape s = v;
  while (s.size() > region.size() && s[0] == 1) s.erase(0);
  return s;
}

// v as r.out's values (broadcast), never sharing storage with `dst` (v may be a view of it).
Tensor values_for(const char* op, const Region& r, const Tensor& v, const Tensor& dst) {
  HEED_CHECK(v.defined(), op, "the value is undefined");
  const Shape vs = value_shape(v.shape(), r.out);
  HEED_CHECK(is_broadcastable_to(vs, r.out), op, "a value of shape ", v.shape(),
             " does not broadcast to the indexed region's shape ", r.out, " (x has shape ", r.x, ")");
  if (vs != r.out) return detail::expand_raw(v.detach().reshape(vs), r.out);
  if (v.impl()->storage != dst.impl()->storage) return v;
  Tensor c = empty(v.shape());
  std::memcpy(c.data(), v.data(), sizeof(real) * v.numel());
  return c;
}

Tensor put_region(const Tensor& x, const Region& r, const Tensor& v);

// Where region r starts in x when it is one contiguous block of x (its elements, in
// row-major order, are x's elements first .. first + n - 1: n distinct offsets, increasing,
// spanning n), else -1; -1 for an empty region too.
int64_t block_start(const Region& r) {
  const int64_t n = r.len.numel();
  if (n == 0) return -1;
  const Shape xs = contiguous_strides(r.x);
  int64_t first = 0, last = 0;  // offsets in x of the region's first and last element
  for (size_t d = 0; d < r.x.size(); ++d) {
    first += r.start[d] * xs[d];
    last += (r.start[d] + (r.len[d] - 1) * r.step[d]) * xs[d];
  }
  return last - first + 1 == n ? first : -1;
}

// x[r] = v is libtorch's set_item: a copy_ into the view x[r]. When that view is one
// contiguous block of x and v (not broadcast) shares some but not all of its elements,
// PyTorch refuses, as copy_ does (core/tensor.h, check_no_overlap). A strided region, or a
// broadcast v, is read whole before x is written (values_for), as if cloned.
void check_region_overlap(const char* op, const Tensor& x, const Region& r, const Tensor& v) {
  if (!v.defined() || v.impl()->storage != x.impl()->storage || v.shape() != r.out) return;
  const int64_t first = block_start(r);
  if (first < 0) return;  // not one block
  detail::check_no_overlap(op, x.detach().reshape(Shape{x.numel()}).narrow(0, first, r.len.numel()), v);
}

// y = x[r]           dx = dy put into zeros at r
Tensor index_region(const Tensor& x, const Region& r) {
  Tensor y = empty(r.out);
  const real* px = x.data();
  real* py = y.data();
  detail::walk_region(r, [&](int64_t off, int64_t k) { py[k] = px[off]; });
  return record("index", y, {x}, kDoubleBackward, [r](const Tensor& dy, Grads& g) {
    g[0] = put_region(zeros(r.x), r, dy);
  });
}

// y = x, then y[r] = v        dx = dy with r zeroed     dv = sum_to(dy[r], v.shape)
// (v's extra leading 1s dropped for the sum and put back after it)
Tensor put_region(const Tensor& x, const Region& r, const Tensor& v) {
  Tensor y = empty(x.shape());
  std::memcpy(y.data(), x.data(), sizeof(real) * x.numel());
  const Tensor vals = values_for("index_put", r, v, y);
  const real* pv = vals.data();
  real* py = y.data();
  detail::walk_region(r, [&](int64_t off, int64_t k) { py[off] = pv[k]; });
  return record("index_put", y, {x, v}, kDoubleBackward, [r, vs = v.shape()](const Tensor& dy, Grads& g) {
    if (g.needs(0)) g[0] = put_region(dy, r, zeros(Shape{}));
    if (g.needs(1)) {
      const Shape s = value_shape(vs, r.out);
      g[1] = s == vs ? sum_to(index_region(dy, r), vs) : sum_to(index_region(dy, r), s).reshape(vs);
    }
  });
}

}  // namespace

// x[I]: a view sharing x's storage when the region is one block of x (x.index({i}),
// x.index({Slice(a, b)}), x.index({i, Slice(a, b)}), ..., as select and narrow along dim 0),
// so in-place ops on it write into x; any other region is gathered into a copy, marked as one
// (core/tensor.h, "Views"): in-place ops refuse it. A region of a copy is a copy too.
Tensor index(const Tensor& x, const std::vector<TensorIndex>& indices) {
  const Region r = resolve_region("index", x.shape(), indices);
  const ViewMark& xv = x.impl()->view;
  const int64_t first = block_start(r);
  if (first < 0 || (xv.op && !xv.shares)) {
    Tensor y = index_region(x, r);
    detail::mark_copy(y, x, "index", -1);
    return y;
  }
  Tensor y = detail::share_block(x, first, r.out, "index", -1);
  return record("index", y, {x}, kDoubleBackward, [r](const Tensor& dy, Grads& g) {
    g[0] = put_region(zeros(r.x), r, dy);
  });
}

Tensor index_put(const Tensor& x, const std::vector<TensorIndex>& indices, const Tensor& v) {
  return put_region(x, resolve_region("index_put", x.shape(), indices), v);
}

Tensor Tensor::index(const std::vector<TensorIndex>& indices) const {
  return heed::index(*this, indices);
}

Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Tensor& v) {
  const char* op = "index_put_";
  const bool in_place = detail::update_in_place(op, *this, v);
  const Region r = resolve_region(op, shape(), indices);
  check_region_overlap(op, *this, r, v);
  if (!in_place) return *this = put_region(*this, r, v);
  const Tensor vals = values_for(op, r, v, *this);
  bump_version();
  const real* pv = vals.data();
  real* px = data();
  detail::walk_region(r, [&](int64_t off, int64_t k) { px[off] = pv[k]; });
  return *this;
}

Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, real v) {
  return index_put_(indices, scalar_tensor(v));
}

}  // namespace heed
