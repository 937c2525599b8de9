// chunked_attention.h - exact scaled dot-product attention computed C query rows at a
// time, so that only a (C, Tk) slab of scores exists at once (the "query chunking" of
// Rabe & Staats 2021, "Self-attention Does Not Need O(n^2) Memory", section 2, without
// their key chunking). The module is layers/attention/chunked_attention.h.
//
// In the README's notation, for the queries Q_n = rows [n C, n C + C) of Q:
//   Attention(Q_n, K, V) = softmax(Q_n K^T / sqrt(d_k)) V            (scale overridable)
//   C_out    = [ Attention(Q_0, K, V); Attention(Q_1, K, V); ... ]   concatenated over t
//   q (B, [H,] Tq, Dk), k (B, [H,] Tk, Dk), v (B, [H,] Tk, Dv) -> context (B, [H,] Tq, Dv)
// Every row's softmax runs over ALL its keys, so the result is exactly full attention;
// chunking only changes how many rows are in flight. Each chunk goes through
// scaled_dot_product_attention (so masks are attention_mask.h's; a chunk's rows keep their
// global query index in the causal rule). With autograd recording each chunk's weights
// are kept for backward, O(B H Tq Tk) in all, unless recompute: each chunk then runs
// under heed::checkpoint (autograd/engine/recompute.h) and backward re-runs one chunk at a time.
//
// Example:
//   Tensor c = chunked_attention(q, k, v, AttentionMask().causal(), 256);
//   Tensor c2 = chunked_attention(q, k, v, {}, 256, {}, 0, false, /*recompute=*/true);
#pragma once
#include <cstdint>
#include <optional>

#include "attention_mask.h"

namespace heed {

// The weights are not returned (gathering them would undo the saving): use
// scaled_dot_product_attention to inspect them. heed::Error naming chunked_attention for
// chunk_size < 1 or a mask that does not fit; shape errors come from the chunks'
// scaled_dot_product_attention.
Tensor chunked_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                         const AttentionMask& mask, int64_t chunk_size,
                         std::optional<double> scale = {}, double dropout_p = 0,
                         bool training = false, bool recompute = false);

}  // namespace heed
