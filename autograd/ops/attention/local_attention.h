// local_attention.h - Luong's local attention once the scores and the aligned positions are
// known (Luong, Pham & Manning 2015, "Effective Approaches to Attention-based Neural Machine
// Translation", section 3.2): the window and, for local-p, the Gaussian. The module that
// computes the scores and predicts p_t is nn::LocalAttention (layers/attention/local_attention.h).
//
//   window   j visible iff |j - p_t| <= D, and not masked otherwise (key padding, mask, causal)
//   local-m  alpha_tj = softmax_j(e_tj over the window)                       (= attend())
//   local-p  alpha_tj = softmax_j(e_tj over the window) * exp(-(j - p_t)^2 / (2 sigma^2)),
//            sigma = D / 2: the Gaussian multiplies the weights after the softmax (so they no
//            longer sum to 1; that is Luong's definition) and carries the gradient to p_t
//   c_t      = sum_j alpha_tj v_j
//
//   scores (B, Tq, Tk), values (B, Tk, Dv), positions p_t (B or 1, Tq, 1), D = window
//   -> context (B, Tq, Dv), weights (B, Tq, Tk)
// The window's edges are a hard 0/1 mask and pass no gradient (as in the paper).
//
// Example:
//   Tensor p = arange(real(Tq)).reshape({1, Tq, 1});                   // local-m: p_t = t
//   Attended a = local_attention("local", e, v, p, 10, /*gaussian=*/false);
//   Attended b = local_attention("local", e, v, p_pred, 10, /*gaussian=*/true, mask);
#pragma once
#include <cstdint>

#include "attend.h"

namespace heed {

// heed::Error naming `op` when the mask does not fit the scores or dropout_p is not in [0, 1).
Attended local_attention(const char* op, const Tensor& scores, const Tensor& values,
                         const Tensor& positions, int64_t window, bool gaussian,
                         const AttentionMask& mask = {}, double dropout_p = 0,
                         bool training = false);

}  // namespace heed
