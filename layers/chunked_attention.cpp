// chunked_attention.cpp - full attention, C query rows at a time, each chunk through
// scaled_dot_product_attention (and so attend()); the chunk contexts are concatenated.
#include "chunked_attention.h"

#include <algorithm>
#include <vector>

#include "../autograd/arith.h"
#include "../autograd/compare.h"
#include "../autograd/recompute.h"
#include "../autograd/shape_ops.h"
#include "../core/error.h"
#include "repr.h"
#include "scaled_dot_product.h"

namespace heed::nn {

namespace {

constexpr const char* kOp = "chunked_attention";

// The part of `m` that applies to query rows [start, start + len) of Tq, as a mask for
// the chunk's (B, [H,] len, Tk) scores: key padding unchanged; the full mask's rows cut
// out (unless it broadcasts over Tq); causal, whose rule j <= i + (Tk - Tq) is about the
// global row i = start + i', written out as the chunk's (len, Tk) triangle
// j <= i' + start + Tk - Tq (the core's own causal flag would count i' from 0).
AttentionMask rows_of(const AttentionMask& m, int64_t start, int64_t len, int64_t Tq, int64_t Tk) {
  AttentionMask out;
  if (m.key_padding().defined()) out.key_padding(m.key_padding());
  Tensor rows;
  if (m.mask().defined()) {
    rows = m.mask().detach();
    if (rows.dim() >= 2 && rows.size(-2) != 1) rows = narrow(rows, -2, start, len);
  }
  if (m.is_causal()) {
    const Tensor tri = tril(ones({len, Tk}), start + Tk - Tq);  // (len, Tk)
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
  return parts.size() == 1 ? parts[0] : cat(parts, -2);
}

ChunkedAttention::ChunkedAttention(const ChunkedAttentionOptions& opts) : options(opts) {
  HEED_CHECK(options.chunk_size() >= 1, "ChunkedAttention", "chunk_size must be >= 1, got ",
             options.chunk_size());
  HEED_CHECK(options.dropout() >= 0 && options.dropout() < 1, "ChunkedAttention",
             "dropout must be in [0, 1), got ", options.dropout());
}

Tensor ChunkedAttention::forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                 const AttentionMask& mask) {
  AttentionMask m = mask;
  if (options.causal()) m.causal(true);
  return chunked_attention(q, k, v, m, options.chunk_size(), options.scale(), options.dropout(),
                           is_training(), options.recompute());
}

std::string ChunkedAttention::repr() const {
  std::string s = "ChunkedAttention(chunk_size=" + std::to_string(options.chunk_size()) +
                  ", causal=" + detail::py_bool(options.causal()) +
                  ", dropout=" + detail::py_float(options.dropout());
  if (options.scale()) s += ", scale=" + detail::py_float(*options.scale());
  return s + ", recompute=" + detail::py_bool(options.recompute()) + ")";
}

}  // namespace heed::nn
