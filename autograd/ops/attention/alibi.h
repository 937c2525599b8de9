// alibi.h - ALiBi, attention with linear biases (Press, Smith & Lewis 2022, "Train Short,
// Test Long: Attention with Linear Biases Enables Input Length Extrapolation", ICLR).
//
// No position is added to the embeddings; instead each head h penalises a score linearly
// in the distance between query i and key j:
//
//   alpha_i = softmax(q_i K^T / sqrt(d_k) + m_h * [-(i-1), ..., -2, -1, 0])     (causal)
//   bias[h, i, j] = -m_h * (i - j)          (default, the paper's causal form)
//   bias[h, i, j] = -m_h * |i - j|          (symmetric = true, for bidirectional encoders)
//
// The slopes are a fixed geometric sequence, for n heads (n a power of 2):
//   m_h = 2^(-8h/n),  h = 1 .. n            8 heads: 1/2, 1/4, ..., 1/256
// For other n the paper's reference code takes the 2^floor(log2 n) slopes of the power of 2
// below n, then every other slope of 2 * that power (those that fall between them) for the
// rest: n = 6 gives 2^-2, 2^-4, 2^-6, 2^-8, then 2^-1, 2^-3.
//
// In the causal form keys j > i get a positive bias; a causal mask hides them (as in the
// paper, which only uses ALiBi in decoders). With Tq != Tk, query i sits at
// query_position(i, Tq, Tk), aligned with the last key as heed's causal mask does
// (autograd/ops/attention/attention_mask.h). Nothing is learned: the bias is a constant of the graph.
// Cost: O(H Tq Tk) time and memory to build the bias (reusable across the batch and across
// layers), then one add to the (B, H, Tq, Tk) scores.
//
// The bias is an attn_bias (added to the scores before mask and softmax), so scaled
// dot-product attention and multi-head attention take it directly.
// Example:
//   Tensor bias = alibi_bias(H, T, T);                        // (H, T, T)
//   auto [ctx, w] = scaled_dot_product_attention(q, k, v, AttentionMask().causal(),
//                                                    bias);      // q, k, v (B, H, T, D)
//   auto [y, w2] = mha->forward(x, x, x, AttentionMask().causal(), bias.unsqueeze(0));
#pragma once
#include "attention_mask.h"

namespace heed {

// (num_heads): m_1 .. m_n as above, computed in double. heed::Error if num_heads < 1.
Tensor alibi_slopes(int64_t num_heads);

// (num_heads, Tq, Tk): -m_h (p_i - j), or -m_h |p_i - j| when symmetric, p_i = query_position(i).
Tensor alibi_bias(int64_t num_heads, int64_t Tq, int64_t Tk, bool symmetric = false);

}  // namespace heed
