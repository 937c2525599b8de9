// block_sparse_attention.h - attention that computes only the kept blocks of a block layout
// (autograd/ops/attention/block_layout.h), forward and backward: time and working memory proportional to
// the kept blocks, not to Tq Tk (Child et al. 2019 run the Sparse Transformer this way).
//
//   S = scale * Q K^T  on the kept blocks only            q (B, [H,] Tq, D)  k (B, [H,] Tk, D)
//   P = softmax_j(mask(S))   dropped blocks, the 0s of partial blocks and the mask's hidden
//                            keys are -inf before the softmax
//   O = P V                                               v (B, [H,] Tk, Dv) -> (B, [H,] Tq, Dv)
//
// It is flash attention (autograd/ops/attention/flash_attention.h) with the layout's b x b blocks as its
// tiles: each query block keeps the online softmax over its kept key blocks only, the
// backward recomputes P from the saved log-sum-exp on the same blocks, and both walk sorted
// lists of kept blocks (by query block forward and for dQ, by key block for dK and dV), so
// a dropped block is never read. The layout is shared by the heads or has one grid per head.
// Masks are heed's one rule (1 = may attend; autograd/ops/attention/attention_mask.h): key padding, causal
// (Tq != Tk aligns the last query with the last key) and any full mask combine with the
// layout inside each tile. A query row with no visible key gets O = 0 and zero gradient; a
// NaN in q, k or v reaches the outputs whose kept scores it enters.
//
// Cost: per kept block two tile products forward (S, P V) and five backward (by_head) or
// seven (by_blocks); memory: L (B, H, Tq) saved besides q, k, v and O, per thread the
// tiles, and the layout. Measured against dense flash attention: tests/bench/
// bench_block_sparse.cpp (the README's variants table).
//
// The reference is block_sparse_attention_composed: sparse_attention (dense scores masked
// with layout.pattern(), autograd/ops/attention/sparse_attention.h). tests/test_block_sparse_attention.cpp
// proves they agree, tests/gradcheck_block_sparse_attention.cpp checks the gradients.
//
// Example:
//   BlockLayout L = bigbird_layout(T, 64, 1, 1, 2);
//   Tensor o = heed::block_sparse_attention(q, k, v, L, AttentionMask().key_padding(pad));
//   Attended a = sparse_attention(q, k, v, strided_layout(T, 64, 7, 16));  // a.weights undefined
#pragma once
#include <optional>

#include "attend.h"
#include "block_layout.h"
#include "flash_attention.h"
#include "sparse_attention.h"

namespace heed {

// heed::Error naming block_sparse_attention when the layout is undefined or not for
// (Tq, Tk) with 1 or H heads, or the shapes or masks do not fit (as flash_attention).
Tensor block_sparse_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                              const BlockLayout& layout, const AttentionMask& mask = {},
                              std::optional<double> scale = {},
                              FlashBackward backward = FlashBackward::automatic);

// The reference: all Tq x Tk scores, masked with layout.pattern() and the mask.
Tensor block_sparse_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                                       const BlockLayout& layout,
                                       const AttentionMask& mask = {},
                                       std::optional<double> scale = {});

// sparse_attention (sparse_attention.h) given a block layout: only its kept blocks are
// computed (block_sparse_attention above) and the weights are never formed (Attended.weights
// is undefined). The kernel has no dropout: with dropout at work (dropout_p > 0 and training)
// this runs the dense form with layout.pattern(), which forms all the scores. heed::Error
// naming block_sparse_attention when the layout does not fit the scores.
Attended sparse_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                          const BlockLayout& layout, const AttentionMask& mask = {},
                          std::optional<double> scale = {}, double dropout_p = 0,
                          bool training = false);

}  // namespace heed
