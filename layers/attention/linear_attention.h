// linear_attention.h - nn::LinearAttention: multi-head attention with linear attention in
// place of softmax (Katharopoulos et al. 2020, "Transformers are RNNs"), batch-first.
//
//   Q = query W_q^T + b_q    K = key W_k^T + b_k    V = value W_v^T + b_v      (B, T, E)
//   head_h = LinearAttention(Q_h, K_h, V_h)        Q_h: head h's E/H columns, as (B, T, E/H)
//   LinearAttention(Q, K, V)_i = phi(Q_i)^T sum_j phi(K_j) V_j^T / phi(Q_i)^T sum_j phi(K_j)
//   out = Concat(head_1, ..., head_H) W_o^T + b_o                               (B, Tq, E)
// with phi(x) = elu(x) + 1; the op and its cost are in autograd/ops/attention/linear_attention.h:
// O(T E^2 / H) time and O(T E) memory instead of softmax attention's O(T^2).
//
// query (B, Tq, E), key (B, Tk, E), value (B, Tk, E) -> output (B, Tq, E). num_heads = 1
// is single-head linear attention. Masks follow heed's convention (autograd/ops/attention/attention_mask.h,
// 1 = may attend): a key-padding mask and causal are supported (with or without the
// options' causal flag); a general (Tq, Tk) mask is not, since linear attention never forms
// the (Tq, Tk) weights (heed::Error). For the same reason there are no weights to return.
//
// Parameters: q_proj, k_proj, v_proj, out_proj, each an nn::Linear(E, E) (weight (E, E),
// bias (E)), initialised as PyTorch's nn.Linear.
//
// Example:
//   auto att = nn::LinearAttention(nn::LinearAttentionOptions(64, 4).causal(true));
//   Tensor y = att->forward(x, x, x);                                     // (B, T, 64)
//   Tensor y2 = att->forward(x, mem, mem, nn::AttentionMask().key_padding(pad));  // cross
#pragma once
#include <memory>

#include "ops.h"
#include "../linear.h"
#include "../module.h"

namespace heed::nn {

class LinearAttentionOptions {
 public:
  LinearAttentionOptions(int64_t embed_dim, int64_t num_heads = 1)
      : embed_dim_(embed_dim), num_heads_(num_heads) {}
  HEED_ARG(int64_t, embed_dim);
  HEED_ARG(int64_t, num_heads);
  HEED_ARG(bool, bias) = true;     // in all four projections
  HEED_ARG(bool, causal) = false;  // always causal
};

class LinearAttentionImpl : public Cloneable<LinearAttentionImpl> {
 public:
  explicit LinearAttentionImpl(const LinearAttentionOptions& options);

  // heed::Error naming LinearAttention for inputs that are not (B, T, E) with one B, for
  // key and value of different lengths, and for a general mask.
  Tensor forward(const Tensor& query, const Tensor& key, const Tensor& value,
                 const AttentionMask& mask = {});
  std::string repr() const override;  // LinearAttention(embed_dim=64, num_heads=4, bias=True, causal=True)

  LinearAttentionOptions options;
  Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, out_proj{nullptr};
};
HEED_MODULE(LinearAttention);

}  // namespace heed::nn
