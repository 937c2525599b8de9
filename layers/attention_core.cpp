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

namespace {

// True when `mask` broadcasts to `scores` without growing it: aligned at the right,
// each of its dims is 1 or the scores' size.
bool broadcasts_to(const Shape& mask, const Shape& scores) {
  const int off = scores.size() - mask.size();
  if (off < 0) return false;
  for (int i = 0; i < mask.size(); ++i)
    if (mask[i] != 1 && mask[i] != scores[off + i]) return false;
  return true;
}

}  // namespace

void check_mask(const char* op, const Shape& s, const AttentionMask& m) {
  const int r = s.size();
  HEED_CHECK(r >= 2, op, "scores must be at least (Tq, Tk), got ", s);
  if (m.key_padding_.defined()) {
    const Tensor& kp = m.key_padding_;
    HEED_CHECK(kp.dim() == 2 && r >= 3 && kp.size(0) == s[0] && kp.size(1) == s[r - 1], op,
               "key padding mask ", kp.shape(), " does not match scores ", s, " (expected (",
               s[0], ",", s[r - 1], "))");
  }
  if (m.mask_.defined())
    HEED_CHECK(broadcasts_to(m.mask_.shape(), s), op, "mask ", m.mask_.shape(),
               " does not broadcast to scores ", s);
}

Tensor visible(const char* op, const Shape& s, const AttentionMask& m) {
  check_mask(op, s, m);
  const int r = s.size();
  const int64_t Tq = s[r - 2], Tk = s[r - 1];
  Tensor vis;
  if (m.key_padding_.defined()) {  // (B, Tk) -> (B, 1.., 1, Tk)
    Shape ks = s;
    for (int i = 1; i < r - 1; ++i) ks[i] = 1;
    vis = m.key_padding_.reshape(ks).detach();
  }
  if (m.mask_.defined()) vis = vis.defined() ? mul(vis, m.mask_.detach()) : m.mask_.detach();
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
  HEED_CHECK(dropout_p >= 0 && dropout_p < 1, op, "dropout must be in [0, 1), got ", dropout_p);
  Tensor e = scores;
  const Tensor vis = visible(op, s, m);
  if (vis.defined()) e = masked_fill(e, eq(vis, 0), -std::numeric_limits<real>::infinity());
  Tensor alpha = softmax(e, -1);  // an all-masked row is 0, with zero gradient
  if (dropout_p > 0 && training) alpha = dropout(alpha, dropout_p, training);
  return {matmul(alpha, values), alpha};
}

}  // namespace heed::nn
