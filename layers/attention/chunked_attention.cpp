// chunked_attention.cpp - nn::ChunkedAttention: options in, chunked_attention out.
#include "chunked_attention.h"

#include "../../core/error.h"
#include "../repr.h"

namespace heed::nn {

ChunkedAttentionImpl::ChunkedAttentionImpl(const ChunkedAttentionOptions& opts) : options(opts) {
  HEED_CHECK(options.chunk_size() >= 1, "ChunkedAttention", "chunk_size must be >= 1, got ",
             options.chunk_size());
  HEED_CHECK(options.dropout() >= 0 && options.dropout() < 1, "ChunkedAttention",
             "dropout must be in [0, 1), got ", options.dropout());
}

Tensor ChunkedAttentionImpl::forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                 const AttentionMask& mask) {
  AttentionMask m = mask;
  if (options.causal()) m.causal(true);
  return chunked_attention(q, k, v, m, options.chunk_size(), options.scale(), options.dropout(),
                           is_training(), options.recompute());
}

std::string ChunkedAttentionImpl::repr() const {
  std::string s = "ChunkedAttention(chunk_size=" + std::to_string(options.chunk_size()) +
                  ", causal=" + detail::py_bool(options.causal()) +
                  ", dropout=" + detail::py_float(options.dropout());
  if (options.scale()) s += ", scale=" + detail::py_float(*options.scale());
  return s + ", recompute=" + detail::py_bool(options.recompute()) + ")";
}

}  // namespace heed::nn
