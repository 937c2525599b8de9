// reduce.h - reductions: sum, mean (reduce.cpp), and through reduce_minmax.h max, min,
// argmax, argmin and var, over all elements or one dim, and through broadcast.h sum_to and
// expand; one include gives them all.
//
// `dim` may be negative; keepdim leaves the reduced dim in place with size 1, as in PyTorch.
#pragma once
#include "../../core/tensor.h"
#include "broadcast.h"
#include "reduce_minmax.h"

namespace heed {

Tensor sum(const Tensor& x);                                      // shape ()
Tensor sum(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, int64_t dim, bool keepdim = false);

}  // namespace heed
