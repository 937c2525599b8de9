// local_attention.cpp - Luong's window (local-m) and Gaussian-weighted window (local-p).
#include "local_attention.h"

#include "../../../core/error.h"
#include "../arith.h"
#include "../compare.h"
#include "../dropout.h"
#include "../linalg.h"
#include "../unary.h"

namespace heed {

// 1. dist = j - p_t, the window |dist| <= D joined to the caller's mask (visible() checks both)
// 2. local-m: attend(e, v, window)
//    local-p: alpha = masked_softmax(e, window) * exp(-dist^2 / (2 sigma^2)), then dropout
//    (training only) and c = alpha v, attend()'s last steps
Attended local_attention(const char* op, const Tensor& scores, const Tensor& values,
                         const Tensor& positions, int64_t window, bool gaussian,
                         const AttentionMask& mask, double dropout_p, bool training) {
  HEED_CHECK(dropout_p >= 0 && dropout_p < 1, op, "dropout must be in [0, 1), got ", dropout_p);
  const int64_t Tk = scores.size(-1);
  const Tensor dist = arange(real(Tk)).reshape({1, 1, Tk}) - positions;  // (B or 1, Tq, Tk)
  const Tensor in_window = le(abs(dist.detach()), real(window));
  const Tensor caller = visible(op, scores.shape(), mask);
  const Tensor vis = caller.defined() ? mul(caller, in_window) : in_window;  // 1 = may attend
  if (!gaussian) return attend(op, scores, values, AttentionMask().mask(vis), dropout_p, training);

  const double sigma = window / 2.0;
  const Tensor gauss = exp(dist * dist * real(-1 / (2 * sigma * sigma)));  // (B or 1, Tq, Tk)
  Tensor alpha = masked_softmax(op, scores, AttentionMask().mask(vis)) * gauss;
  if (dropout_p > 0 && training) alpha = dropout(alpha, dropout_p, true);
  return {matmul(alpha, values), alpha};
}

}  // namespace heed
