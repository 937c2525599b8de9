// broadcast.h - expand, which broadcasts a tensor up to a shape (copying), and its inverse
// sum_to, which sums a tensor down to a shape: sum_to is the backward of every broadcasting
// op (arith.cpp's + - * / pow, compare.cpp's where, linalg.cpp's batch dims), expand the
// backward of sum. reduce.h includes this header.
//
//   y = expand(x, s)        dx = sum_to(dy, x.shape)
//   y = sum_to(x, s)        dx = expand(dy, x.shape)
#pragma once
#include "../../core/tensor.h"

namespace heed {

// Sum `x` down to `shape` (the inverse of broadcasting `shape` up to x.shape()).
Tensor sum_to(const Tensor& x, const Shape& shape);
// Broadcast x up to `shape` (copying). A size of -1 keeps the size of the dim of x it
// stands over, as PyTorch's: expand((3, 1), (2, -1, 4)) is (2, 3, 4); a new leading dim
// cannot be -1.
Tensor expand(const Tensor& x, const Shape& shape);

namespace detail {
// The kernels without the graph, shared with sum (reduce.cpp).
Tensor sum_dim_raw(const Tensor& x, int d, bool keepdim);  // out[o, i] = sum_k x[o, k, i]
Tensor expand_raw(const Tensor& x, const Shape& shape);    // a fill when x has one element
}  // namespace detail

}  // namespace heed
