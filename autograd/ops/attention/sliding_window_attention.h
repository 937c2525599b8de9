// sliding_window_attention.h - local (sliding-window) self-attention, banded so that it
// costs O(T w), not O(T^2) (Beltagy et al. 2020, "Longformer", section 3.1; Child et al.
// 2019 use the causal form as one head of their "strided" pattern).
//
// In the README's notation, for query i and key j of one sequence of length T:
//   W(i)     = { j : |i - j| <= w }              symmetric window (2w + 1 keys)
//            = { j : i - w <= j <= i }           causal window    (w + 1 keys)
//   e_ij     = q_i . k_j / sqrt(d_k)              only for j in W(i) (scale overridable)
//   alpha_ij = exp(e_ij) / sum_{j' in W(i)} exp(e_ij')      over visible keys only
//   c_i      = sum_{j in W(i)} alpha_ij v_j
// Each key is counted once in each window it falls in: a common sketch, which runs full
// attention on overlapping slices and concatenates, counts overlaps twice and sees a seam
// at every slice boundary; this one is exactly full attention with the band mask
// sliding_window_pattern(T, w, causal) (autograd/ops/attention/sparse_attention.h), which is its reference.
//
// How the band is formed (all with autograd ops, so backward comes from autograd):
//   1. pad T up to a multiple of the block size b (b >= w) and cut q, k, v into blocks
//        qb (B, [H,] N, b, D)          N = ceil(T / b) blocks
//   2. for block n gather the keys [n b - w, n b + b + w): the last w rows of block n-1,
//      block n, the first w rows of block n+1 (zeros outside [0, T); causal skips block
//      n+1), for all n at once
//        kb (B, [H,] N, c, Dk)    vb (B, [H,] N, c, Dv)     c = b + 2w (causal: b + w)
//   3. e = (qb * scale) kb^T             (B, [H,] N, b, c)  the band of scores
//   4. attend(): a 0/1 band mask marks which band entries are in W(i), inside [0, T) and
//      not key padding; mask -> softmax -> dropout -> weighted sum (autograd/ops/attention/attend.h)
//   5. un-block the context (B, [H,] N b, Dv) and drop the padded rows -> (B, [H,] T, Dv)
// Every query's whole window lies in its band because b >= w, so nothing is cut off.
//
// Masks (1 = may attend, as everywhere in heed): key_padding (B, T) and causal are
// honoured; a full `mask` is refused (it is (T, T), which the band exists to avoid: use
// sparse_attention with mask * sliding_window_pattern instead). q, k and v must have the
// same length T. A query whose window holds only padding gets a zero context and zero
// gradients. w >= T - 1 is full (or full causal) attention; w = 0 attends only to itself.
//
// The weights are not returned (they live in the band layout); to inspect them, run
// sparse_attention with sliding_window_pattern, which gives the same context.
//
// Example:
//   Tensor c = sliding_window_attention(q, k, v, AttentionMask().causal(), 64);
//   Tensor c2 = sliding_window_attention(q, k, v, {}, 64);   // symmetric: |i - j| <= 64
// The module is layers/attention/sliding_window_attention.h.
#pragma once
#include <cstdint>
#include <optional>

#include "attention_mask.h"

namespace heed {

// The window's definition, in one place: is key j in query i's window W(i), for a
// sequence of length T? Causal: j <= causal_last_key(i, T, T) (= i) and i - j <= w.
inline bool in_window(int64_t i, int64_t j, int64_t T, int64_t w, bool causal) {
  const int64_t d = query_position(i, T, T) - j;  // i - j
  return causal ? (j <= causal_last_key(i, T, T) && d <= w) : (d <= w && -d <= w);
}

// q (B, [H,] T, Dk), k (B, [H,] T, Dk), v (B, [H,] T, Dv) -> context (B, [H,] T, Dv).
// block = 0 picks max(window, 16); a block smaller than the window is raised to it.
// heed::Error naming sliding_window_attention for bad shapes, window < 0 or a full mask.
Tensor sliding_window_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                const AttentionMask& mask, int64_t window,
                                std::optional<double> scale = {}, double dropout_p = 0,
                                bool training = false, int64_t block = 0);

}  // namespace heed
