// softmax.h - softmax and log_softmax over one dim, numerically stable (max subtracted).
//
//   softmax(x)_i     = exp(x_i - m) / sum_j exp(x_j - m),   m = max_j x_j
//   log_softmax(x)_i = x_i - m - log(sum_j exp(x_j - m))
// A row that is entirely -inf (every position masked) gives zeros from softmax, not
// NaN, and zero gradient (see softmax.cpp); log_softmax of such a row is -inf.
#pragma once
#include "../../core/tensor.h"

namespace heed {

Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

// The same two composed from max, sub, exp, sum, div and log: slower, their gradient is those
// ops'. The references the fused ops are tested against (tests/gradcheck_softmax.cpp). The
// max is detached (a constant shift: it changes no value and no gradient). No rule for an
// all -inf row: there they give NaN, where the fused ops give 0 (softmax) and -inf.
Tensor softmax_reference(const Tensor& x, int64_t dim);
Tensor log_softmax_reference(const Tensor& x, int64_t dim);

}  // namespace heed
