// flash_attention.h - memory-efficient ("flash") scaled dot-product attention: the same
// function as the composed version, computed tile by tile so that the (Tq, Tk) scores
// are never stored (Dao et al. 2022, "FlashAttention"; Dao 2023, "FlashAttention-2").
//
//   S = scale * Q K^T          (Tq, Tk)   scale = 1/sqrt(D) unless given
//   P = softmax_j(mask(S))     masked scores are -inf before the softmax
//   O = P V                    (Tq, Dv)
//
//   q (B, H, Tq, D)   k (B, H, Tk, D)   v (B, H, Tk, Dv)   ->   O (B, H, Tq, Dv)
//   or (B, T, D) without the head dim (read as H = 1).
// Two more entries read the heads where a projection leaves them, side by side in the
// last dim ((B, T, H, D) viewed as (B, T, H*D)), and write O the same way, so multi-head
// attention needs no split_heads / merge_heads copies (layers/attention/multihead_attention.cpp):
//   flash_attention_heads    q (B, Tq, H*D)  k (B, Tk, H*D)  v (B, Tk, H*Dv)  ->  (B, Tq, H*Dv)
//   flash_attention_packed   qkv (B, T, 3*H*D), [Q | K | V] from one GEMM  ->  (B, T, H*D)
//                            or q (B, Tq, H*D) and kv (B, Tk, 2*H*D), [K | V] from one GEMM
// and two read the keys and values from the filled prefix of a key/value cache's
// preallocated (B, H, L, D) storage (flash_attention_prefix, flash_attention_heads_prefix).
// The kernel reads each head with a row stride (H*D, or 3*H*D) instead of copying it out,
// and backward accumulates dQ, dK, dV at the same strides: for the packed form straight
// into the columns of one (B, T, 3*H*D) gradient, which feeds the one projection GEMM.
// B batch, H heads, Tq/Tk query/key lengths, D query/key width, Dv value width.
//
// How (autograd/ops/attention/flash_attention.cpp has the numbered steps): the queries are cut into
// blocks of Br rows and the keys into blocks of Bc columns. For one query block the key
// blocks are visited in turn, keeping per row the running max m, the running sum l of
// exp(S - m) and the unnormalised output, rescaled whenever m grows (online softmax).
// Only the per-row log-sum-exp L = m + log(l) is saved; backward recomputes each tile's
// P = exp(S - L) from it. Causal tiles entirely above the diagonal are never computed.
//
// Masks: heed's one convention (autograd/ops/attention/attention_mask.h, 1 = may attend): key_padding
// (B, Tk) and causal (causal_last_key, real_key) are evaluated inside each tile; a full mask
// broadcastable to (B, H, Tq, Tk) is read tile by tile (it is O(Tq Tk) input by nature).
// Causal with Tq != Tk aligns the last query with the last key. A query row with no
// visible key gets O = 0, L = -inf and zero gradient, never NaN (for finite inputs).
// NaN and inf propagate exactly as in the composed twin, whatever the tile sizes: a NaN
// score (NaN or inf in q, k or the scale) makes its row's output and gradients NaN, and a
// NaN or inf in v reaches every row's output in its column, since the composed sum
// multiplies it by every weight, 0 included (0 * NaN = NaN). With D = 0 the scores are 0
// and O is the mean of the visible values, whatever the scale (tests/test_nan_propagation.cpp).
// Mask values other than 0 and 1 are a heed::Error (check_mask). There is no additive
// bias here: for torch's float attn_mask use scaled_dot_product_attention(..., attn_bias),
// the composed path (MultiheadAttention switches to it when given an attn_bias).
//
// Memory: L (B, H, Tq) saved besides q, k, v and O, plus per thread two Br x Bc tiles and
// a Br x Dv accumulator, never O(Tq Tk). Measured (tests/test_flash_attention.cpp, causal
// T = 16384, H = 4, D = 64): the op holds 0.4 MiB beyond its inputs, O and the gradients,
// forward or backward; a whole backward() peaks at 16 MiB beyond them, autograd's copy of
// one gradient into .grad. Times and the composed version's cost: the README's table.
//
// The composed twin, built from matmul, masked_fill and softmax through attend,
// is flash_attention_composed(); tests/test_flash_attention.cpp proves the two agree in
// outputs and gradients (the side-by-side and packed entries against it on heads split
// by permute and narrow), tests/gradcheck_flash_attention.cpp checks the gradients.
//
// Example:
//   Tensor o = heed::flash_attention(q, k, v, AttentionMask().causal());
//   Tensor r = heed::flash_attention_composed(q, k, v, AttentionMask().causal());  // == o
#pragma once
#include <cstdint>
#include <optional>

#include "../../../core/arg.h"
#include "../../../core/tensor.h"
#include "attend.h"
#include "block_layout.h"

namespace heed {

// How backward shares the work among threads. Both are exact and race-free:
//   by_head    one task per (batch, head) walks all its tiles once: 5 tile products per
//              tile, dQ, dK and dV accumulated in place (the task owns the head)
//   by_blocks  pass A, one task per query block, accumulates dQ; pass B, one task per key
//              block, dK and dV: 7 products per tile (S and dO V^T are computed in both
//              passes), but as many tasks as blocks, so it balances when the heads do not
//   automatic  by_head when B * H is a multiple of the thread count, else by_blocks
enum class FlashBackward { automatic, by_head, by_blocks };

// Tile sizes and the backward schedule. The default 128 x 128 tiles: of 64..256 x 64..256
// tried for D = 64 on the 2-core test machines, 128 x 64 was first on one and 128 x 128 on
// the next, where 128 x 64 was slower at T = 4096 and at GPT small's shapes (B 8, H 6,
// T 256) and level at T <= 512 (two sets of alternating rounds, medians; bench_models'
// attn_T4096 and gpt_small cases and bench_attention's rows time the default tiles).
// Each tile product runs on heed's own register kernel (core/packed_gemm.h), which packs
// the key block once and the query-side operand per product, so wider tiles pay that packing
// less often. Tests force tiny odd tiles (2 x 3) to exercise every tile boundary, and each
// backward schedule.
// blocks(layout): block-sparse attention (autograd/ops/attention/block_sparse_attention.h): the tiles are
// the layout's b x b blocks (rows and cols are ignored) and only its kept blocks are visited.
class FlashOptions {
 public:
  HEED_ARG(int64_t, rows) = 128;  // Br: queries per tile
  HEED_ARG(int64_t, cols) = 128;  // Bc: keys per tile
  HEED_ARG(FlashBackward, backward) = FlashBackward::automatic;
  HEED_ARG(BlockLayout, blocks);  // undefined: every tile
};

// O = softmax(mask(scale q k^T)) v, tiled. heed::Error naming flash_attention when the
// shapes do not fit (above), a mask does not fit the scores, or a tile size is < 1.
Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                       const AttentionMask& mask = {}, std::optional<double> scale = {},
                       const FlashOptions& options = FlashOptions());

namespace detail {
// flash_attention, its errors naming `op` (block_sparse_attention calls it so).
Tensor flash_attention_named(const char* op, const Tensor& q, const Tensor& k, const Tensor& v,
                             const AttentionMask& mask, std::optional<double> scale,
                             const FlashOptions& options);
}  // namespace detail

// q, k, v with the heads side by side, as above; heed::Error naming flash_attention_heads
// when they do not fit (B, Tq, H*D), (B, Tk, H*D), (B, Tk, H*Dv). scale defaults to
// 1/sqrt(D). Equals merge(flash_attention(split(q), split(k), split(v))), where split is
// (B, T, H*D) -> (B, H, T, D) and merge its inverse.
Tensor flash_attention_heads(const Tensor& q, const Tensor& k, const Tensor& v,
                             int64_t num_heads, const AttentionMask& mask = {},
                             std::optional<double> scale = {},
                             const FlashOptions& options = FlashOptions());

// Self-attention on one packed projection qkv (B, T, 3E), E = H*D: columns [0, E) are Q,
// [E, 2E) K, [2E, 3E) V, head h of each in its columns [h D, (h+1) D). -> (B, T, E).
// heed::Error naming flash_attention_packed when qkv is not (B, T, 3*H*D). Equals
// flash_attention_heads(narrow(qkv, 2, 0, E), narrow(qkv, 2, E, E), narrow(qkv, 2, 2E, E), H).
Tensor flash_attention_packed(const Tensor& qkv, int64_t num_heads,
                              const AttentionMask& mask = {},
                              std::optional<double> scale = {},
                              const FlashOptions& options = FlashOptions());

// Cross-attention with the keys and values from one packed projection kv (B, Tk, 2E):
// columns [0, E) are K, [E, 2E) V; q (B, Tq, E). -> (B, Tq, E). heed::Error naming
// flash_attention_packed when they are not (B, Tq, H*D) and (B, Tk, 2*H*D). Equals
// flash_attention_heads(q, narrow(kv, 2, 0, E), narrow(kv, 2, E, E), H).
Tensor flash_attention_packed(const Tensor& q, const Tensor& kv, int64_t num_heads,
                              const AttentionMask& mask = {},
                              std::optional<double> scale = {},
                              const FlashOptions& options = FlashOptions());

// Attention to the first `len` keys of preallocated storage, read in place: a key/value
// cache (layers/attention/kv_cache.h) keeps k (B, H, L, D) and v (B, H, L, Dv) for L = max_len
// positions, of which [0, len) are filled; the kernel reads each head's filled rows where
// they are (head stride L*D, row stride D), never gathering them into a (B, H, len, D) copy.
//   flash_attention_prefix        q (B, H, Tq, D)   -> (B, H, Tq, Dv)
//   flash_attention_heads_prefix  q (B, Tq, H*D), heads side by side -> (B, Tq, H*Dv)
// Masks and causal are for the scores (B, H, Tq, len): causal aligns the last query with
// key len - 1 (so Tq new tokens after len - Tq cached ones see what a full causal pass shows
// them), key_padding is (B, len). Equals flash_attention(q, narrow(k, 2, 0, len),
// narrow(v, 2, 0, len)) (and the _heads form with the heads split), outputs and gradients:
// dk and dv are zero past len. heed::Error naming the entry when the shapes do not fit or
// len is outside [0, L].
Tensor flash_attention_prefix(const Tensor& q, const Tensor& k, const Tensor& v, int64_t len,
                              const AttentionMask& mask = {},
                              std::optional<double> scale = {},
                              const FlashOptions& options = FlashOptions());
Tensor flash_attention_heads_prefix(const Tensor& q, const Tensor& k, const Tensor& v,
                                    int64_t len, const AttentionMask& mask = {},
                                    std::optional<double> scale = {},
                                    const FlashOptions& options = FlashOptions());

namespace detail {
// flash_attention_heads_prefix with q's heads in columns [q0, q0 + H*D) of q (B, Tq, W):
// nn::MultiheadAttention reads the queries inside its one (B, Tq, 3E) projection.
Tensor flash_attention_heads_prefix_at(const Tensor& q, int64_t q0, const Tensor& k,
                                       const Tensor& v, int64_t len,
                                       const AttentionMask& mask, std::optional<double> scale,
                                       const FlashOptions& options);
}  // namespace detail

// The reference: attend(matmul(q, k^T) * scale, v, mask).context, which forms the
// full (B, H, Tq, Tk) scores and weights. Same arguments and result as flash_attention.
Tensor flash_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                                const AttentionMask& mask = {},
                                std::optional<double> scale = {});

}  // namespace heed
