// sliding_window_attention.cpp - the band of scores, built from narrow/cat/reshape and one
// batched matmul; attend() does mask -> softmax -> dropout -> weighted sum.
//
// Shape letters: B batch, H heads (optional), T length, N blocks, b block size,
// w window, c = band width (b + 2w symmetric, b + w causal), D head width.
#include "sliding_window_attention.h"

#include <algorithm>

#include "../../../core/error.h"
#include "../arith.h"
#include "attend.h"
#include "../linalg.h"
#include "../../engine/node.h"
#include "scaled_dot_product.h"  // attention_scale
#include "../shape.h"

namespace heed {

namespace {

constexpr const char* kOp = "sliding_window_attention";

void check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& m,
                  int64_t window) {
  const int r = q.dim();
  HEED_CHECK(r >= 3 && k.dim() == r && v.dim() == r, kOp,
             "q, k, v must all be (B, [H,] T, D) of the same rank; got q ", q.shape(), ", k ",
             k.shape(), ", v ", v.shape());
  for (int d = 0; d < r - 1; ++d)
    HEED_CHECK(k.size(d) == q.size(d) && v.size(d) == q.size(d), kOp,
               "q, k, v must share (B, [H,] T) (self-attention over one sequence); got q ",
               q.shape(), ", k ", k.shape(), ", v ", v.shape());
  HEED_CHECK(k.size(-1) == q.size(-1), kOp, "q ", q.shape(), " and k ", k.shape(),
             " must share the key width Dk (last dim)");
  HEED_CHECK(q.size(-2) >= 1, kOp, "the sequence is empty: q ", q.shape());
  HEED_CHECK(window >= 0, kOp, "window must be >= 0, got ", window);
  HEED_CHECK(!m.mask().defined(), kOp, "a full (Tq, Tk) mask defeats the band; pass key_padding "
             "and causal only, or use sparse_attention with mask * sliding_window_pattern");
  const Tensor& kp = m.key_padding();
  if (kp.defined())
    HEED_CHECK(kp.dim() == 2 && kp.size(0) == q.size(0) && kp.size(1) == q.size(-2), kOp,
               "key padding mask ", kp.shape(), " must be (B, T) = (", q.size(0),
               ",", q.size(-2), ")");
  check_mask_values(kOp, "key padding mask", kp);
}

// x (..., T, D) -> (..., N, b, D), zero rows appended after T to fill N b.
Tensor to_blocks(const Tensor& x, int64_t b, int64_t N) {
  const int r = x.dim();
  const int64_t pad = N * b - x.size(-2);
  Tensor xp = x;
  if (pad > 0) {
    Shape zs = x.shape();
    zs[r - 2] = pad;
    xp = cat({x, zeros(zs)}, r - 2);  // (..., N b, D)
  }
  Shape s = x.shape();
  s[r - 2] = b;
  s.insert(r - 2, N);
  return xp.reshape(s);
}

// xb (..., N, b, D) -> (..., N, left + b + right, D): for block n, the rows
// [n b - left, n b + b + right) of the padded sequence, zeros before 0 and after N b.
// Needs left, right <= b (each neighbour is a single block).
Tensor band(const Tensor& xb, int64_t left, int64_t right) {
  const int R = xb.dim(), nd = R - 3, rd = R - 2;  // block dim, row-in-block dim
  const int64_t N = xb.size(nd), b = xb.size(rd);
  std::vector<Tensor> parts;
  if (left > 0) {  // the last `left` rows of block n-1 (zeros for n = 0)
    Shape zs = xb.shape();
    zs[nd] = 1;
    zs[rd] = left;
    const Tensor tails = narrow(xb, rd, b - left, left);  // (..., N, left, D)
    parts.push_back(N > 1 ? cat({zeros(zs), narrow(tails, nd, 0, N - 1)}, nd) : zeros(zs));
  }
  parts.push_back(xb);
  if (right > 0) {  // the first `right` rows of block n+1 (zeros for n = N-1)
    Shape zs = xb.shape();
    zs[nd] = 1;
    zs[rd] = right;
    const Tensor heads = narrow(xb, rd, 0, right);  // (..., N, right, D)
    parts.push_back(N > 1 ? cat({narrow(heads, nd, 1, N - 1), zeros(zs)}, nd) : zeros(zs));
  }
  return parts.size() == 1 ? xb : cat(parts, rd);
}

// The 0/1 band mask (B or 1, 1.., N, b, c): band entry (n, row, col) is query
// i = n b + row against key j = n b - left + col; visible when i < T, 0 <= j < T, j is in
// W(i) and key j is not padding. Broadcasts over the heads.
Tensor band_visible(int rank, int64_t T, int64_t N, int64_t b, int64_t left, int64_t c,
                    int64_t w, bool causal, const Tensor& key_padding) {
  const int64_t B = key_padding.defined() ? key_padding.size(0) : 1;
  Shape s{B};
  for (int d = 1; d < rank - 2; ++d) s.push_back(1);
  for (int64_t n : {N, b, c}) s.push_back(n);
  Tensor vis = empty(s);
  real* out = vis.data();
  const real* kp = key_padding.defined() ? key_padding.data() : nullptr;
  for (int64_t bb = 0; bb < B; ++bb)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t row = 0; row < b; ++row)
        for (int64_t col = 0; col < c; ++col) {
          const int64_t i = n * b + row, j = n * b - left + col;
          const bool ok = i < T && j >= 0 && j < T && in_window(i, j, T, w, causal) &&
                          real_key(kp ? kp + bb * T : nullptr, j);
          *out++ = ok ? real(1) : real(0);
        }
  return vis;
}

}  // namespace

Tensor sliding_window_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                const AttentionMask& mask, int64_t window,
                                std::optional<double> scale, double dropout_p, bool training,
                                int64_t block) {
  check_inputs(q, k, v, mask, window);
  const int r = q.dim();
  const int64_t T = q.size(-2);
  const bool causal = mask.is_causal();
  const int64_t w = std::min(window, T - 1);  // a wider window is the whole sequence
  const int64_t b = std::min(std::max({block > 0 ? block : int64_t{16}, w, int64_t{1}}), T);
  const int64_t N = (T + b - 1) / b;
  const int64_t left = w, right = causal ? 0 : w, c = left + b + right;
  const double s = attention_scale(q, scale);

  // 1-2. blocks of queries, bands of keys and values
  const Tensor qb = to_blocks(q * real(s), b, N);           // (B, [H,] N, b, Dk)
  const Tensor kb = band(to_blocks(k, b, N), left, right);  // (B, [H,] N, c, Dk)
  const Tensor vb = band(to_blocks(v, b, N), left, right);  // (B, [H,] N, c, Dv)
  // 3. e = (q * scale) k^T on the band only
  const Tensor e = matmul(qb, kb.transpose(-2, -1));        // (B, [H,] N, b, c)
  // 4. mask -> softmax -> dropout -> weighted sum, the shared core
  const Tensor vis = band_visible(r, T, N, b, left, c, w, causal, mask.key_padding());
  const Attended a = attend(kOp, e, vb, AttentionMask().mask(vis), dropout_p, training);
  // 5. (B, [H,] N, b, Dv) -> (B, [H,] N b, Dv) -> (B, [H,] T, Dv)
  Shape cs = v.shape();
  cs[r - 2] = N * b;
  const Tensor ctx = a.context.reshape(cs);
  return named(kOp, N * b > T ? narrow(ctx, r - 2, 0, T) : ctx, {q, k, v});
}

}  // namespace heed
