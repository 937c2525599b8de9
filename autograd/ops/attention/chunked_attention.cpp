// chunked_attention.cpp - full attention, C query rows at a time, each chunk through
// scaled_dot_product_attention (and so attend()); the chunk contexts are concatenated.
#include "chunked_attention.h"

#include <algorithm>
#include <vector>

#include "../../../core/error.h"
#include "../arith.h"
#include "../../engine/node.h"
#include "../../engine/recompute.h"
#include "scaled_dot_product.h"
#include "../shape.h"

namespace heed {

namespace {

constexpr const char* kOp = "chunked_attention";

// The part of `m` that applies to query rows [start, start + len) of Tq, as a mask for
// the chunk's (B, [H,] len, Tk) scores: key padding unchanged; the full mask's rows cut
// out (unless it broadcasts over Tq); causal, whose rule is about the global row
// i = start + i', written out as the chunk's rows of the (Tq, Tk) triangle (the core's own
// causal flag would count i' from 0).
AttentionMask rows_of(const AttentionMask& m, int64_t start, int64_t len, int64_t Tq, int64_t Tk) {
  AttentionMask out;
  if (m.key_padding().defined()) out.key_padding(m.key_padding());
  Tensor rows;
  if (m.mask().defined()) {
    rows = m.mask().detach();
    if (rows.dim() >= 2 && rows.size(-2) != 1) rows = narrow(rows, -2, start, len);
  }
  if (m.is_causal()) {
    const Tensor tri = causal_mask(Tq, Tk, start, len);  // (len, Tk)
    rows = rows.defined() ? mul(rows, tri) : tri;
  }
  if (rows.defined()) out.mask(rows);
  return out;
}

}  // namespace

// for n = 0, 1, ...:  c_n = SDPA(q[n C : n C + C], k, v, the mask's rows n C ...)
// c = cat(c_0, c_1, ...) along Tq
Tensor chunked_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                         const AttentionMask& mask, int64_t chunk_size,
                         std::optional<double> scale, double dropout_p, bool training,
                         bool recompute) {
  HEED_CHECK(chunk_size >= 1, kOp, "chunk_size must be >= 1, got ", chunk_size);
  HEED_CHECK(q.dim() >= 3 && k.dim() == q.dim(), kOp, "q and k must be (B, [H,] T, D) of the "
             "same rank; got q ", q.shape(), ", k ", k.shape());
  const int64_t Tq = q.size(-2), Tk = k.size(-2);
  Shape scores = q.shape();  // (B, [H,] Tq, Tk): the full scores, never formed
  scores[scores.size() - 1] = Tk;
  check_mask(kOp, scores, mask);

  const int64_t n_chunks = std::max<int64_t>(1, (Tq + chunk_size - 1) / chunk_size);
  std::vector<Tensor> parts;
  for (int64_t n = 0; n < n_chunks; ++n) {
    const int64_t start = n * chunk_size, len = std::min(chunk_size, Tq - start);
    // One chunk, as a function of (q_n, k, v) so that checkpoint can re-run it.
    auto chunk = [=](const std::vector<Tensor>& x) {
      return scaled_dot_product_attention(x[0], x[1], x[2], rows_of(mask, start, len, Tq, Tk), {},
                                          dropout_p, training, scale)
          .context;  // (B, [H,] len, Dv)
    };
    const Tensor qn = len == Tq ? q : narrow(q, -2, start, len);  // (B, [H,] len, Dk)
    parts.push_back(recompute ? checkpoint(chunk, {qn, k, v}) : chunk({qn, k, v}));
  }
  return named(kOp, parts.size() == 1 ? parts[0] : cat(parts, -2), {q, k, v});
}

}  // namespace heed
