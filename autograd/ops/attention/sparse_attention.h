// sparse_attention.h - attention restricted to a fixed 0/1 pattern of (query, key) pairs,
// and generators for the patterns of Child et al. 2019, "Generating Long Sequences with
// Sparse Transformers" (section 4.2), plus the sliding window.
//
// In the README's notation, with S the pattern (S_ij = 1: query i may attend key j):
//   e_ij     = q_i . k_j / sqrt(d_k)                        (scale overridable)
//   alpha_ij = exp(e_ij) / sum_{j' : S_ij' = 1} exp(e_ij')   over the pattern only
//   c_i      = sum_j alpha_ij v_j
// It IS scaled dot-product attention with AttentionMask.mask = S (combined with any other
// mask, key padding and causal): the pattern goes through the one masking path of the core
// (autograd/ops/attention/attend.h), 1 = may attend.
//
// The patterns (T x T, 0/1; i the query, j the key, l the stride or block length):
//   strided_pattern(T, l)       A(1) = { j : i - l <= j <= i }       the previous l positions
//                               A(2) = { j : (i - j) mod l = 0 }      every l-th position back
//                               S = A(1) u A(2), with j <= i; causal = false drops j <= i
//                               and makes both sets symmetric (|i - j| <= l, |i - j| mod l = 0)
//   fixed_pattern(T, l, c)      A(1) = { j : floor(j / l) = floor(i / l) }   the own block
//                               A(2) = { j : j mod l >= l - c }       the last c of every block
//                               S = A(1) u A(2), with j <= i unless causal = false
//   sliding_window_pattern(T, w, causal)   { j : |i - j| <= w } or { j : i - w <= j <= i }
// Every pattern holds its diagonal (S_ii = 1), causal or not, so no query is left with no
// key: a row comes out all-masked (zero context, zero gradient) only when other masks
// (key padding, or causal with Tq != Tk) remove what the pattern allowed.
//
// This composed form forms all Tq x Tk scores and masks them, so a pattern of 5% density
// costs what dense attention costs. Given a block layout instead of a pattern
// (block_layout.h: the blocks of b x b scores that hold a 1, or a generator's), the overload
// of sparse_attention in block_sparse_attention.h runs the block-sparse kernel, which
// computes only the kept blocks; this dense form with layout.pattern() is its tested
// reference. The module is layers/attention/sparse_attention.h.
//
// Example:
//   Tensor S = strided_pattern(T, 8);                       // (T, T)
//   Attended a = sparse_attention(q, k, v, S);              // a.context (B, [H,] T, Dv)
//   Attended b = sparse_attention(q, k, v, fixed_pattern(T, 16, 2),
//                                 AttentionMask().key_padding(pad));
#pragma once
#include <cstdint>
#include <optional>

#include "attend.h"

namespace heed {

Tensor strided_pattern(int64_t T, int64_t stride, bool causal = true);
Tensor fixed_pattern(int64_t T, int64_t block, int64_t c, bool causal = true);
Tensor sliding_window_pattern(int64_t T, int64_t w, bool causal);

// q (B, [H,] Tq, Dk), k (B, [H,] Tk, Dk), v (B, [H,] Tk, Dv), pattern (Tq, Tk) or any
// 0/1 tensor broadcastable to the scores -> context and weights (B, [H,] Tq, Tk).
// `mask` is combined with the pattern (a key is visible only where both allow it).
Attended sparse_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                          const Tensor& pattern, const AttentionMask& mask = {},
                          std::optional<double> scale = {}, double dropout_p = 0,
                          bool training = false);

// The fraction of 1s in a pattern: what a block-sparse kernel would compute.
double pattern_density(const Tensor& pattern);

}  // namespace heed
