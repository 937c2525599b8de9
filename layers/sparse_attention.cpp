// sparse_attention.cpp - nn::SparseAttention: options in, sparse_attention out.
#include "sparse_attention.h"

#include "../core/error.h"
#include "repr.h"

namespace heed::nn {

SparseAttention::SparseAttention(const SparseAttentionOptions& opts) : options(opts) {
  HEED_CHECK(options.pattern().defined(), "SparseAttention", "the pattern is undefined");
  HEED_CHECK(options.dropout() >= 0 && options.dropout() < 1, "SparseAttention",
             "dropout must be in [0, 1), got ", options.dropout());
}

Attended SparseAttention::forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                  const AttentionMask& mask) {
  AttentionMask m = mask;
  if (options.causal()) m.causal(true);
  return sparse_attention(q, k, v, options.pattern(), m, options.scale(), options.dropout(),
                          is_training());
}

std::string SparseAttention::repr() const {
  std::string s = "SparseAttention(pattern=" + detail::py_tuple(options.pattern().shape().vec()) +
                  ", density=" + detail::py_float(pattern_density(options.pattern())) +
                  ", causal=" + detail::py_bool(options.causal()) +
                  ", dropout=" + detail::py_float(options.dropout());
  if (options.scale()) s += ", scale=" + detail::py_float(*options.scale());
  return s + ")";
}

}  // namespace heed::nn
