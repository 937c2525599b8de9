// scaled_dot_product.h - scaled dot-product attention (Vaswani et al. 2017, "Attention Is
// All You Need", section 3.2.1), as a function and as a module.
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
// weighted sum are the shared core (layers/attention_core.h), including the mask
// convention (1 = may attend), causal alignment when Tq != Tk (the last query sees the
// last key) and fully masked rows (zero context, zero gradient, never NaN).
//
// attn_bias is PyTorch's float attn_mask: a float tensor broadcastable to the scores
// (B, [H,] Tq, Tk), e.g. (Tq, Tk) or (H, Tq, Tk), added to them before the mask and the
// softmax. -inf hides a key, so a torch 0/-inf mask goes here unchanged (the 0/1 `mask`
// rejects it). It is differentiable: a learned bias gets its gradient. Its users are
// position biases: ALiBi (layers/alibi.h), T5-style relative buckets.
//
// Cost: time O(B H Tq Tk (Dk + Dv)), memory O(B H Tq Tk): the scores and the weights
// are formed in full and kept for the backward pass. The tiled kernel that never forms
// them (autograd/flash_attention.h) has this composed version as its reference.
//
// Example:
//   auto [c, w] = nn::scaled_dot_product_attention(q, k, v, nn::AttentionMask().causal());
//   auto [c2, w2] = nn::scaled_dot_product_attention(q, k, v, nn::AttentionMask().causal(),
//                                                    nn::alibi_bias(H, Tq, Tk));  // q (B, H, Tq, D)
//   auto sdpa = std::make_shared<nn::ScaledDotProductAttention>(
//       nn::ScaledDotProductAttentionOptions().dropout(0.1).causal(true));
//   nn::Attended a = sdpa->forward(q, k, v);   // a.context (B, Tq, Dv), a.weights (B, Tq, Tk)
#pragma once
#include <optional>

#include "attention_core.h"
#include "module.h"

namespace heed::nn {

// heed::Error naming scaled_dot_product_attention when q, k, v do not fit the shapes
// above (same rank, 3 or 4; same leading dims; q and k share Dk; k and v share Tk), when
// the mask does not fit (attention_core.h) or attn_bias does not broadcast to the scores.
Attended scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                      const AttentionMask& mask = {}, const Tensor& attn_bias = {},
                                      double dropout_p = 0, bool training = false,
                                      std::optional<double> scale = {});

class ScaledDotProductAttentionOptions {
 public:
  ScaledDotProductAttentionOptions() = default;
  ScaledDotProductAttentionOptions& dropout(double p) { dropout_ = p; return *this; }  // on alpha
  ScaledDotProductAttentionOptions& scale(double s) { scale_ = s; return *this; }  // replaces 1/sqrt(Dk)
  ScaledDotProductAttentionOptions& causal(bool on) { causal_ = on; return *this; }  // always causal
  double dropout() const { return dropout_; }
  std::optional<double> scale() const { return scale_; }
  bool causal() const { return causal_; }

 private:
  double dropout_ = 0;
  std::optional<double> scale_;
  bool causal_ = false;
};

// No parameters: the module only holds the options and the train/eval switch that
// turns dropout on and off.
class ScaledDotProductAttention : public Module {
 public:
  explicit ScaledDotProductAttention(
      const ScaledDotProductAttentionOptions& options = ScaledDotProductAttentionOptions());

  // The options' causal flag is added to `mask`; dropout applies while training.
  Attended forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask = {},
                   const Tensor& attn_bias = {});
  std::string repr() const override;  // ScaledDotProductAttention(dropout=0.1, causal=True)

  ScaledDotProductAttentionOptions options;
};

}  // namespace heed::nn
