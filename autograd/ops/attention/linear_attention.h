// linear_attention.h - linear attention (Katharopoulos et al. 2020, "Transformers are RNNs:
// Fast Autoregressive Transformers with Linear Attention"), one op with its own backward.
//
// Softmax attention weighs value j by exp(q_i . k_j); linear attention replaces that
// similarity by a kernel phi(q_i)^T phi(k_j) with the feature map phi(x) = elu(x) + 1 > 0:
//
//   out_i = sum_j phi(q_i)^T phi(k_j) v_j / sum_j phi(q_i)^T phi(k_j)
//         = phi(q_i)^T S / phi(q_i)^T z      S = sum_j phi(k_j) v_j^T  (D, Dv)   z = sum_j phi(k_j)  (D)
//
// Regrouping the products that way is the whole trick: S and z are formed once, so the
// (Tq, Tk) weights never exist. Causal attention keeps running prefix sums instead,
//   S_i = sum_{j <= i} phi(k_j) v_j^T      z_i = sum_{j <= i} phi(k_j)
// which makes a causal layer an RNN with a (D, Dv) state.
//
//   q (B, [H,] Tq, D)   k (B, [H,] Tk, D)   v (B, [H,] Tk, Dv)   ->   out (B, [H,] Tq, Dv)
// B batch, H heads (optional), Tq/Tk query/key lengths, D feature width, Dv value width.
// No 1/sqrt(D) scale: the paper applies phi to q and k as they are.
//
// Masks, in heed's convention (autograd/ops/attention/attention_mask.h: 1 = may attend):
//   key_padding (B, Tk)  a padded key j is dropped from every sum by zeroing phi(k_j);
//                        works with and without causal. A general (Tq, Tk) mask cannot
//                        be expressed: it does not factor through S and z.
//   causal               query i sees key j when j <= causal_last_key(i, Tq, Tk), as
//                        everywhere in heed (the last query is aligned with the last key).
// A query that sees no key (all its keys padded) gets out_i = 0 and zero gradients.
//
// Cost, per (batch, head): time O((Tq + Tk) D Dv) forward and about three times that
// backward; memory O(T (D + Dv)) in all: the output, and in backward the gradients, plus
// per thread O(D Dv) state (and 2 Tq numbers in backward). The graph saves only q, k, v
// (and the mask); backward rebuilds S and z. For the causal form it replays the prefix
// sums going forward (for dq) and accumulates suffix sums of the gradient going backward
// (for dk, dv), the paper's Algorithm 1, so it never stores T copies of S.
//
// linear_attention_reference() is the explicit quadratic kernel form composed from heed
// ops, A_ij = phi(q_i)^T phi(k_j) (0 where masked), out = (A V) / (A 1), with O(Tq Tk)
// time and memory; tests/test_linear_attention.cpp proves the two agree.
//
// Example:
//   Tensor y = linear_attention(q, k, v, /*causal=*/true);      // (B, H, T, Dv)
//   Tensor y2 = linear_attention(q, k, v, false, key_padding);   // padding (B, Tk), 1 = real key
#pragma once
#include "../../../core/tensor.h"

namespace heed {

// heed::Error naming linear_attention when the shapes do not fit the above (same rank,
// 3 or 4; same leading dims; q and k share D; k and v share Tk; padding (B, Tk)).
Tensor linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal = false,
                        const Tensor& key_padding = Tensor());

// The same function composed from primitive ops (elu, matmul, tril, sum, div): the
// reference the fast kernel is tested against. O(Tq Tk) memory.
Tensor linear_attention_reference(const Tensor& q, const Tensor& k, const Tensor& v,
                                  bool causal = false, const Tensor& key_padding = Tensor());

}  // namespace heed
