// sliding_window_attention.cpp - nn::SlidingWindowAttention: options in, the function out.
#include "sliding_window_attention.h"

#include "../../core/error.h"
#include "../repr.h"

namespace heed::nn {

SlidingWindowAttentionImpl::SlidingWindowAttentionImpl(const SlidingWindowAttentionOptions& opts)
    : options(opts) {
  HEED_CHECK(options.window() >= 0, "SlidingWindowAttention", "window must be >= 0, got ",
             options.window());
  HEED_CHECK(options.dropout() >= 0 && options.dropout() < 1, "SlidingWindowAttention",
             "dropout must be in [0, 1), got ", options.dropout());
  HEED_CHECK(options.block() >= 0, "SlidingWindowAttention", "block must be >= 0 (0 = auto), got ",
             options.block());
}

Tensor SlidingWindowAttentionImpl::forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                       const AttentionMask& mask) {
  AttentionMask m = mask;
  if (options.causal()) m.causal(true);
  return sliding_window_attention(q, k, v, m, options.window(), options.scale(), options.dropout(),
                                  is_training(), options.block());
}

std::string SlidingWindowAttentionImpl::repr() const {
  std::string s = "SlidingWindowAttention(window=" + std::to_string(options.window()) +
                  ", causal=" + detail::py_bool(options.causal()) +
                  ", dropout=" + detail::py_float(options.dropout());
  if (options.scale()) s += ", scale=" + detail::py_float(*options.scale());
  return s + ")";
}

}  // namespace heed::nn
