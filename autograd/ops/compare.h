// compare.h - comparisons, selection and masking.
//
// heed has one element type, so a comparison returns a tensor of 0 and 1 (a "mask").
// Comparisons are not differentiable (their outputs never require grad). where and
// masked_fill are differentiable in the values they pass through, not in the mask.
// Masks broadcast like any operand.
#pragma once
#include "../../core/tensor.h"

namespace heed {

Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, real b);
Tensor ne(const Tensor& a, real b);
Tensor lt(const Tensor& a, real b);
Tensor le(const Tensor& a, real b);
Tensor gt(const Tensor& a, real b);
Tensor ge(const Tensor& a, real b);
Tensor logical_not(const Tensor& mask);

// y = cond != 0 ? a : b        (cond, a, b broadcast together)
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// y = mask != 0 ? value : x    (mask broadcasts to x.shape())
Tensor masked_fill(const Tensor& x, const Tensor& mask, real value);
// Upper / lower triangle of the last two dims; k shifts the diagonal (k > 0: above).
Tensor triu(const Tensor& x, int64_t k = 0);
Tensor tril(const Tensor& x, int64_t k = 0);

}  // namespace heed
