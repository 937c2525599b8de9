// region.h - internal: an index list of integers, Slices, None and Ellipsis (core/slice.h)
// resolved against a shape, and the walk over the elements it picks. Shared by Tensor's
// index / index_put (autograd/ops/tensor_index.cpp) and IndexTensor's index (core/index_tensor.cpp).
//
// A Region holds, for each dim of the indexed tensor, a start, a step and a count (1 for an
// integer index), and the shape index() returns (integer dims removed, None's 1s added).
// walk_region visits the picked elements in row-major order by one odometer: f(offset, k),
// offset into the indexed tensor's contiguous buffer, k the element's place in the result.
#pragma once
#include <cstdint>
#include <vector>

#include "shape.h"
#include "slice.h"

namespace heed::detail {

struct Region {
  Shape x;                                   // the indexed tensor's shape
  int64_t start[kMaxDims] = {}, step[kMaxDims] = {};
  Shape len;                                 // elements taken along each dim of x
  Shape out;                                 // index()'s shape: no integer dims, None's 1s
};

// heed::Error naming `op` for an integer out of range, a step <= 0, more indices than dims,
// two Ellipses or a string other than "...".
Region resolve_region(const char* op, const Shape& s, const std::vector<indexing::TensorIndex>& indices);

// f(offset in x, k) for the region's k-th element, k in row-major order of r.len.
template <class F>
void walk_region(const Region& r, const F& f) {
  const int rank = r.x.size();
  const int64_t n = r.len.numel();
  if (n == 0) return;
  const Shape xs = contiguous_strides(r.x);
  int64_t idx[kMaxDims] = {}, off = 0;
  for (int d = 0; d < rank; ++d) off += r.start[d] * xs[d];
  for (int64_t k = 0; k < n; ++k) {
    f(off, k);
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t jump = r.step[d] * xs[d];
      if (++idx[d] < r.len[d]) {
        off += jump;
        break;
      }
      off -= jump * (r.len[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace heed::detail
