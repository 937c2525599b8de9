// relative_position.h - relative position representations (Shaw, Uszkoreit & Vaswani 2018,
// "Self-Attention with Relative Position Representations", NAACL).
//
// Encodes relative distances between positions (Shaw et al. 2018). Instead of adding a position
// to each token, the edge from query i to key j carries two learned vectors, looked up by
// the clipped distance, shared by all heads of a layer:
//
//   a^K_ij = w^K_{clip(j - i, k)}     a^V_ij = w^V_{clip(j - i, k)}     clip(x, k) = max(-k, min(k, x))
//   e_ij   = (q_i . k_j + q_i . a^K_ij) / sqrt(d)          q_i = x_i W^Q, k_j = x_j W^K
//   alpha_ij = softmax_j(e_ij)
//   c_i    = sum_j alpha_ij (v_j + a^V_ij)                  v_j = x_j W^V
//
// w^K, w^V: (2k+1, d), row r + k holding distance r. With Tq != Tk, query i sits at
// query_position(i, Tq, Tk), aligned with the last key as heed's causal mask
// (autograd/ops/attention/attention_mask.h).
//
// Memory. Written as in the paper, a^K_ij and a^V_ij are (Tq, Tk, d) tensors, O(Tq Tk d).
// heed never forms them. Only R <= min(2k+1, Tq+Tk-1) distinct vectors exist, so
//   key term    q_i . a^K_ij = P[i, r(i,j)],            P = q w^K^T          (.., Tq, R)
//   value term  sum_j alpha_ij a^V_ij = sum_r A[i, r] w^V_r,
//               A[i, r] = sum_{j : r(i,j) = r} alpha_ij                        (.., Tq, R)
// gather_buckets / scatter_buckets (autograd/ops/attention/relative_position.h) move between j and r;
// the two terms as functions are autograd/ops/attention/relative_position_terms.h.
// Cost on top of plain attention: O(B H Tq R d) time for the two small matmuls,
// O(B H Tq Tk) for the gather and scatter, and O(B H Tq R) memory for P and A: no more
// than twice the (B, H, Tq, Tk) scores attention keeps anyway (when Tq <= Tk), and
// independent of d. The paper's form adds O(Tq Tk d) for a^K and a^V on top of that; the
// *_reference functions build it that way, and tests prove both forms agree.
//
// Example:
//   auto attn = nn::RelativeSelfAttention(
//       nn::RelativeSelfAttentionOptions(256, 8, 16).dropout(0.1));   // E, H, k
//   auto [y, w] = attn->forward(x, nn::AttentionMask().causal());       // x (B, T, 256)
#pragma once
#include <memory>

#include "ops.h"
#include "../linear.h"
#include "../module.h"
#include "multihead_attention.h"

namespace heed::nn {

// The tables w^K and w^V of one attention layer, shared by its heads.
class RelativePositionEmbeddingImpl : public Module {
 public:
  RelativePositionEmbeddingImpl(int64_t max_relative_position, int64_t head_dim);

  Tensor key_bias(const Tensor& q, int64_t Tk, double scale) const {  // (.., Tq, Tk)
    return relative_key_bias(q, key_table, Tk, scale);
  }
  Tensor value_context(const Tensor& alpha) const {  // (.., Tq, d)
    return relative_value_context(alpha, value_table);
  }
  std::string repr() const override;  // RelativePositionEmbedding(max_relative_position=16, head_dim=64)
  void reset_parameters();            // xavier_uniform_, as TensorFlow's default initialiser

  int64_t max_relative_position, head_dim;  // k, d
  Tensor key_table;    // w^K (2k+1, d)
  Tensor value_table;  // w^V (2k+1, d)

  // A deep copy (module.h): a new module of the same sizes, with these values.
  std::shared_ptr<RelativePositionEmbeddingImpl> clone() const { return std::static_pointer_cast<RelativePositionEmbeddingImpl>(clone_module()); }

 protected:
  std::shared_ptr<Module> clone_module() const override {
    auto copy = std::make_shared<RelativePositionEmbeddingImpl>(max_relative_position, head_dim);
    copy->copy_state_from(*this);
    return copy;
  }
};
HEED_MODULE(RelativePositionEmbedding);

class RelativeSelfAttentionOptions {
 public:
  RelativeSelfAttentionOptions(int64_t embed_dim, int64_t num_heads, int64_t max_relative_position)
      : embed_dim_(embed_dim), num_heads_(num_heads), max_relative_position_(max_relative_position) {}
  HEED_ARG(int64_t, embed_dim);
  HEED_ARG(int64_t, num_heads);              // each head is embed_dim / num_heads wide
  HEED_ARG(int64_t, max_relative_position);  // k
  HEED_ARG(double, dropout) = 0;
  HEED_ARG(bool, bias) = true;
};

// Multi-head self-attention with Shaw et al.'s relative positions (num_heads = 1: one head).
//   q, k, v = x W^Q, x W^K, x W^V, split into H heads of d = E / H      (B, H, T, d)
//   e = q k^T / sqrt(d) + key_bias(q)                                     (B, H, T, T)
//   alpha, c = attend(e, v, mask)          (mask, softmax, dropout, alpha @ v: autograd/ops/attention/attend.h)
//   c += value_context(alpha)                                             (B, H, T, d)
//   y = concat_heads(c) W^O                                               (B, T, E)
class RelativeSelfAttentionImpl : public Cloneable<RelativeSelfAttentionImpl> {
 public:
  explicit RelativeSelfAttentionImpl(const RelativeSelfAttentionOptions& options);

  // x (B, T, E) -> output (B, T, E), weights (B, T, T) averaged over heads or (B, H, T, T).
  AttentionOutput forward(const Tensor& x, const AttentionMask& mask = {},
                          bool average_attn_weights = true);
  std::string repr() const override;

  RelativeSelfAttentionOptions options;
  Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, out_proj{nullptr};  // (E, E) each
  RelativePositionEmbedding relative{nullptr};       // w^K, w^V (2k+1, d)
};
HEED_MODULE(RelativeSelfAttention);

}  // namespace heed::nn
