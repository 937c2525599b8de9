// attend.cpp - masking, softmax, dropout and the weighted sum, for every variant.
#include "attend.h"

#include <limits>

#include "../../../core/error.h"
#include "../compare.h"
#include "../dropout.h"
#include "../linalg.h"
#include "../softmax.h"

namespace heed {

// e' = e where visible, -inf elsewhere;  alpha = softmax(e')
Tensor masked_softmax(const char* op, const Tensor& scores, const AttentionMask& m) {
  Tensor e = scores;
  const Tensor vis = visible(op, scores.shape(), m);
  if (vis.defined()) e = masked_fill(e, eq(vis, 0), -std::numeric_limits<real>::infinity());
  return softmax(e, -1);  // an all-masked row is 0, with zero gradient
}

// alpha = masked_softmax(e);  c = dropout(alpha) @ V
Attended attend(const char* op, const Tensor& scores, const Tensor& values, const AttentionMask& m,
                double dropout_p, bool training) {
  const Shape& s = scores.shape();
  HEED_CHECK(values.dim() == scores.dim() && values.size(-2) == s.back(), op, "scores ", s,
             " and values ", values.shape(), " do not align (values must be (..., Tk, Dv))");
  HEED_CHECK(dropout_p >= 0 && dropout_p < 1, op, "dropout must be in [0, 1), got ", dropout_p);
  Tensor alpha = masked_softmax(op, scores, m);
  if (dropout_p > 0 && training) alpha = dropout(alpha, dropout_p, training);
  return {matmul(alpha, values), alpha};
}

}  // namespace heed
