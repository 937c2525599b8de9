// scaled_dot_product.h - scaled dot-product attention (Vaswani et al. 2017, "Attention Is
// All You Need", section 3.2.1), the function; the module is layers/attention/scaled_dot_product.h.
//
//   Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + bias) V
//
// in the notation the README defines, for query t and key j:
//   e_tj     = q_t . k_j / sqrt(d_k) + bias_tj        the score (scale overridable; the
//                                                      additive bias is optional)
//   alpha_tj = exp(e_tj) / sum_j' exp(e_tj')           over the visible keys only
//   c_t      = sum_j alpha_tj v_j                      the context vector
//
//   q (B, [H,] Tq, Dk)   k (B, [H,] Tk, Dk)   v (B, [H,] Tk, Dv)
//   -> context (B, [H,] Tq, Dv), weights alpha (B, [H,] Tq, Tk)
// B batch, H heads (optional), Tq/Tk query/key lengths, Dk key width, Dv value width.
//
// Only the score e is computed here; masking, softmax, dropout on the weights and the
// weighted sum are attend() (autograd/ops/attention/attend.h), with the mask rules of
// autograd/ops/attention/attention_mask.h. attn_bias is PyTorch's float attn_mask: broadcastable to the
// scores, added before the mask and the softmax, -inf hides a key, differentiable; its
// users are position biases (ALiBi, autograd/ops/attention/alibi.h). The tiled kernel that never forms
// the scores, autograd/ops/attention/flash_attention.h, is checked against this composed form.
//
// Example:
//   auto [c, w] = scaled_dot_product_attention(q, k, v, AttentionMask().causal());
//   auto [c2, w2] = scaled_dot_product_attention(q, k, v, AttentionMask().causal(),
//                                                    alibi_bias(H, Tq, Tk));  // q (B, H, Tq, D)
#pragma once
#include <optional>

#include "attend.h"

namespace heed {

// heed::Error naming scaled_dot_product_attention when q, k, v do not fit the shapes
// above (check_qkv), when the mask does not fit (attention_mask.h) or attn_bias does not
// broadcast to the scores.
Attended scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                      const AttentionMask& mask = {}, const Tensor& attn_bias = {},
                                      double dropout_p = 0, bool training = false,
                                      std::optional<double> scale = {});

// heed::Error naming `op` unless q (B, [H,] Tq, Dk), k (B, [H,] Tk, Dk), v (B, [H,] Tk, Dv):
// the same rank, 3 or 4; the same leading dims; q and k share Dk; k and v share Tk. Every
// attention function over q, k, v checks its inputs with it (flash, linear, ...).
void check_qkv(const char* op, const Tensor& q, const Tensor& k, const Tensor& v);

// The scale of the scores: `scale` if given, else 1 / sqrt(Dk) with Dk = q.size(-1).
double attention_scale(const Tensor& q, std::optional<double> scale);

}  // namespace heed
