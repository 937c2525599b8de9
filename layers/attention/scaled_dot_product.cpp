// scaled_dot_product.cpp - nn::ScaledDotProductAttention: options in, the function out.
#include "scaled_dot_product.h"

#include "../../core/error.h"
#include "../repr.h"

namespace heed::nn {

ScaledDotProductAttentionImpl::ScaledDotProductAttentionImpl(const ScaledDotProductAttentionOptions& opts)
    : options(opts) {
  HEED_CHECK(options.dropout() >= 0 && options.dropout() < 1, "ScaledDotProductAttention",
             "dropout must be in [0, 1), got ", options.dropout());
}

Attended ScaledDotProductAttentionImpl::forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                            const AttentionMask& mask, const Tensor& attn_bias) {
  AttentionMask m = mask;
  if (options.causal()) m.causal(true);
  return scaled_dot_product_attention(q, k, v, m, attn_bias, options.dropout(), is_training(),
                                      options.scale());
}

std::string ScaledDotProductAttentionImpl::repr() const {
  std::string s = "ScaledDotProductAttention(dropout=" + detail::py_float(options.dropout());
  if (options.scale()) s += ", scale=" + detail::py_float(*options.scale());
  return s + ", causal=" + detail::py_bool(options.causal()) + ")";
}

}  // namespace heed::nn
