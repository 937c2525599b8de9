// scaled_dot_product.h - nn::ScaledDotProductAttention, the module around the function
// nn::scaled_dot_product_attention (autograd/ops/attention/scaled_dot_product.h: the equation, shapes,
// masks and attn_bias are described there). No parameters: the module holds its options
// and the train/eval switch that turns dropout on and off.
//
// Example:
//   auto sdpa = nn::ScaledDotProductAttention(
//       nn::ScaledDotProductAttentionOptions().dropout(0.1).causal(true));
//   nn::Attended a = sdpa->forward(q, k, v);   // a.context (B, Tq, Dv), a.weights (B, Tq, Tk)
#pragma once
#include <optional>

#include "ops.h"
#include "../module.h"

namespace heed::nn {

class ScaledDotProductAttentionOptions {
 public:
  HEED_ARG(double, dropout) = 0;           // on alpha
  HEED_ARG(std::optional<double>, scale);  // replaces 1/sqrt(Dk)
  HEED_ARG(bool, causal) = false;          // always causal
};

class ScaledDotProductAttentionImpl : public Cloneable<ScaledDotProductAttentionImpl> {
 public:
  explicit ScaledDotProductAttentionImpl(
      const ScaledDotProductAttentionOptions& options = ScaledDotProductAttentionOptions());

  // The options' causal flag is added to `mask`; dropout applies while training.
  Attended forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask = {},
                   const Tensor& attn_bias = {});
  std::string repr() const override;  // ScaledDotProductAttention(dropout=0.1, causal=True)

  ScaledDotProductAttentionOptions options;
};
HEED_MODULE(ScaledDotProductAttention);

}  // namespace heed::nn
