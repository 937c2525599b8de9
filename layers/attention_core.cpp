// attention_core.cpp - masking, softmax, dropout and the weighted sum, for every variant.
#include "attention_core.h"

#include <limits>

#include "../autograd/arith.h"
#include "../autograd/compare.h"
#include "../autograd/dropout_op.h"
#include "../autograd/linalg.h"
#include "../autograd/softmax.h"
#include "../core/error.h"

namespace heed::nn {

Tensor visible(const char* op, const Shape& s, const AttentionMask& m) {
  const int r = s.size();
  HEED_CHECK(r >= 2, op, "scores must be at least (Tq, Tk), got ", s);
  const int64_t Tq = s[r - 2], Tk = s[r - 1];
  Tensor vis;
  if (m.key_padding_.defined()) {  // (B, Tk) -> (B, 1.., 1, Tk)
    const Tensor& kp = m.key_padding_;
    HEED_CHECK(kp.dim() == 2 && r >= 3 && kp.size(0) == s[0] && kp.size(1) == Tk, op,
               "key padding mask ", kp.shape(), " does not match scores ", s, " (expected (",
               s[0], ",", Tk, "))");
    Shape ks = s;
    for (int i = 1; i < r - 1; ++i) ks[i] = 1;
    vis = kp.reshape(ks).detach();
  }
  if (m.mask_.defined()) {
    HEED_CHECK(broadcast_shapes(op, m.mask_.shape(), s) == s, op, "mask ", m.mask_.shape(),
               " does not broadcast to scores ", s);
    vis = vis.defined() ? mul(vis, m.mask_.detach()) : m.mask_.detach();
  }
  if (m.causal_) {  // j <= i + (Tk - Tq)
    Tensor c = tril(ones({Tq, Tk}), Tk - Tq);
    vis = vis.defined() ? mul(vis, c) : c;
  }
  return vis;
}

// e' = e where visible, -inf elsewhere;  alpha = softmax(e');  c = dropout(alpha) @ V
Attended attend(const char* op, const Tensor& scores, const Tensor& values, const AttentionMask& m,
                double dropout_p, bool training) {
  const Shape& s = scores.shape();
  HEED_CHECK(values.dim() == scores.dim() && values.size(-2) == s.back(), op, "scores ", s,
             " and values ", values.shape(), " do not align (values must be (..., Tk, Dv))");
  Tensor e = scores;
  const Tensor vis = visible(op, s, m);
  if (vis.defined()) e = masked_fill(e, eq(vis, 0), -std::numeric_limits<real>::infinity());
  Tensor alpha = softmax(e, -1);  // an all-masked row is 0, with zero gradient
  if (dropout_p > 0 && training) alpha = dropout(alpha, dropout_p, training);
  return {matmul(alpha, values), alpha};
}

}  // namespace heed::nn
