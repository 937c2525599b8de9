// views.h - reshape, view, squeeze, unsqueeze, flatten: new shapes over the same storage.
//
//   y = reshape(x, s)        dx = reshape(dy, x.shape)
// Every heed tensor is contiguous and row-major, so any reshape with the same number of
// elements is a view: no data moves, forward or backward (views.cpp). shape.h includes
// this header, so the ops that copy and the views come with one include.
#pragma once
#include "../../core/tensor.h"

namespace heed {

Tensor reshape(const Tensor& x, const Shape& shape);  // one dim may be -1
Tensor unsqueeze(const Tensor& x, int64_t dim);
// Removes dim when its size is 1; any other size returns x as it is (PyTorch's rule).
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor squeeze(const Tensor& x);                       // every dim of size 1
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);

}  // namespace heed
