// scaled_dot_product.cpp - the score e = q k^T * scale; attend() does the rest.
#include "scaled_dot_product.h"

#include <cmath>

#include "../../../core/error.h"
#include "../../engine/node.h"
#include "../arith.h"
#include "../linalg.h"

namespace heed {

void check_qkv(const char* op, const Tensor& q, const Tensor& k, const Tensor& v) {
  const int r = q.dim();
  HEED_CHECK((r == 3 || r == 4) && k.dim() == r && v.dim() == r, op,
             "q, k, v must all be (B, Tq|Tk, D) or (B, H, Tq|Tk, D); got q ", q.shape(), ", k ",
             k.shape(), ", v ", v.shape());
  for (int d = 0; d < r - 2; ++d)
    HEED_CHECK(k.size(d) == q.size(d) && v.size(d) == q.size(d), op, "batch/head dims differ: q ",
               q.shape(), ", k ", k.shape(), ", v ", v.shape());
  HEED_CHECK(k.size(-1) == q.size(-1), op, "q ", q.shape(), " and k ", k.shape(),
             " must share the key width Dk (last dim)");
  HEED_CHECK(v.size(-2) == k.size(-2), op, "k ", k.shape(), " and v ", v.shape(),
             " must share the key length Tk (dim -2)");
}

double attention_scale(const Tensor& q, std::optional<double> scale) {
  return scale ? *scale : 1 / std::sqrt(double(q.size(-1)));
}

// 1. e = (q * scale) k^T      (B, [H,] Tq, Tk); scaling q costs Tq*Dk, scaling e Tq*Tk
// 2. e = e + attn_bias        broadcast; its gradient is de summed over the broadcast dims
// 3. c, alpha = attend(e, v)  mask -> softmax -> dropout -> alpha v
Attended scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                      const AttentionMask& mask, const Tensor& attn_bias,
                                      double dropout_p, bool training, std::optional<double> scale) {
  constexpr const char* kOp = "scaled_dot_product_attention";
  check_qkv(kOp, q, k, v);
  Tensor e = matmul(q * real(attention_scale(q, scale)), k.transpose(-2, -1));  // (B, [H,] Tq, Tk)
  if (attn_bias.defined()) {
    check_bias(kOp, e.shape(), attn_bias);
    e = e + attn_bias;
  }
  Attended a = attend(kOp, e, v, mask, dropout_p, training);
  a.context = named(kOp, a.context, {q, k, v});  // its last op is attend's matmul
  return a;
}

}  // namespace heed
