// reduce_minmax.h - max, min, argmax, argmin and var, over all elements or one dim
// (reduce_minmax.cpp; reduce.h includes this header).
//
// `dim` may be negative; keepdim leaves the reduced dim in place with size 1, as in
// PyTorch. max/min over a dim return values and indices, usable as
//   auto [values, indices] = heed::max(x, 1);
// Gradients of max/min flow to the (first) position that attained the extreme.
#pragma once
#include "../../core/tensor.h"

namespace heed {

struct ValuesIndices {
  Tensor values;
  IndexTensor indices;
};

Tensor max(const Tensor& x);                                      // shape ()
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor min(const Tensor& x);
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim = false);
IndexTensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
IndexTensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);
// Variance with Bessel's correction by default (unbiased = true), as torch.var.
Tensor var(const Tensor& x, bool unbiased = true);
Tensor var(const Tensor& x, int64_t dim, bool unbiased = true, bool keepdim = false);
// var(x, 1) means dim 1: an int literal matches this overload exactly, not the bool one.
inline Tensor var(const Tensor& x, int dim, bool unbiased = true, bool keepdim = false) {
  return var(x, int64_t(dim), unbiased, keepdim);
}

}  // namespace heed
