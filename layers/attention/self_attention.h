// self_attention.h - nn::SelfAttention: one head of scaled dot-product self-attention,
// the textbook first example (Q, K and V all projected from the same sequence x).
//
//   Q = x W_Q + b_Q     K = x W_K + b_K     V = x W_V + b_V
//   Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V
//
//   x (B, T, d_model) -> context (B, T, d_v), weights alpha (B, T, T)
//   W_q: Linear(d_model, d_k)   W_k: Linear(d_model, d_k)   W_v: Linear(d_model, d_v)
// d_k and d_v default to d_model. The submodules are named W_q, W_k, W_v, as tutorial
// PyTorch versions of this class name them, so such a state_dict ("W_q.weight", ...) loads by name.
//
// It returns both the output and the weights (callers typically unpack `out, attn =
// self_attn(x)`), as nn::Attended {context, weights}. There is
// no output projection: multi-head attention (multihead_attention.h) adds W^O.
// Masks, causal alignment and fully masked rows: autograd/ops/attention/attention_mask.h.
//
// Cost: projections O(B T d_model (2 d_k + d_v)); attention O(B T^2 (d_k + d_v)) time
// and O(B T^2) memory.
//
// Example:
//   auto attn = nn::SelfAttention(nn::SelfAttentionOptions(64));
//   auto [out, weights] = attn->forward(x, nn::AttentionMask().key_padding(pad));
#pragma once
#include <memory>

#include "ops.h"
#include "../linear.h"
#include "../module.h"

namespace heed::nn {

class SelfAttentionOptions {
 public:
  SelfAttentionOptions(int64_t d_model) : d_model_(d_model) {}  // implicit, as libtorch's
  HEED_ARG(int64_t, d_model);
  HEED_ARG(int64_t, d_k) = 0;  // 0 = d_model (nn::SelfAttention's options hold d_model)
  HEED_ARG(int64_t, d_v) = 0;  // likewise
  HEED_ARG(bool, bias) = true;
  HEED_ARG(double, dropout) = 0;  // on the weights
};

class SelfAttentionImpl : public Cloneable<SelfAttentionImpl> {
 public:
  explicit SelfAttentionImpl(const SelfAttentionOptions& options);

  // x (B, T, d_model) -> {context (B, T, d_v), weights (B, T, T)}. heed::Error naming
  // SelfAttention if x is not (B, T, d_model).
  Attended forward(const Tensor& x, const AttentionMask& mask = {});
  std::string repr() const override;  // SelfAttention(d_model=64, d_k=64, d_v=64)

  SelfAttentionOptions options;
  Linear W_q{nullptr}, W_k{nullptr}, W_v{nullptr};
};
HEED_MODULE(SelfAttention);

}  // namespace heed::nn
