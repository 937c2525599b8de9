// reduce.h - reductions: sum, mean (reduce.cpp), and through reduce_minmax.h max, min,
// argmax, argmin and var, over all elements or one dim; one include gives them all.
//
// `dim` may be negative; keepdim leaves the reduced dim in place with size 1, as in PyTorch.
#pragma once
#include "../core/tensor.h"
#include "reduce_minmax.h"

namespace heed {

Tensor sum(const Tensor& x);                                      // shape ()
Tensor sum(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, int64_t dim, bool keepdim = false);
// Sum `x` down to `shape` (the inverse of broadcasting `shape` up to x.shape()):
// the backward of every broadcasting op. Differentiable (its backward broadcasts).
Tensor sum_to(const Tensor& x, const Shape& shape);
// Broadcast x up to `shape` (copying). Differentiable (its backward is sum_to).
Tensor expand(const Tensor& x, const Shape& shape);

}  // namespace heed
