// sparse_attention.cpp - nn::SparseAttention: options in, sparse_attention out.
#include "sparse_attention.h"

#include "../../core/error.h"
#include "../repr.h"

namespace heed::nn {

SparseAttentionImpl::SparseAttentionImpl(const SparseAttentionOptions& opts) : options(opts) {
  HEED_CHECK(options.pattern().defined() || options.layout().defined(), "SparseAttention",
             "neither a pattern nor a block layout is given");
  HEED_CHECK(options.dropout() >= 0 && options.dropout() < 1, "SparseAttention",
             "dropout must be in [0, 1), got ", options.dropout());
}

Attended SparseAttentionImpl::forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                  const AttentionMask& mask) {
  AttentionMask m = mask;
  if (options.causal()) m.causal(true);
  if (options.layout().defined())
    return sparse_attention(q, k, v, options.layout(), m, options.scale(), options.dropout(),
                            is_training());
  return sparse_attention(q, k, v, options.pattern(), m, options.scale(), options.dropout(),
                          is_training());
}

std::string SparseAttentionImpl::repr() const {
  const BlockLayout& L = options.layout();
  std::string s = "SparseAttention(";
  if (L.defined())
    s += "layout=" + detail::py_tuple({L.q_blocks(), L.k_blocks()}) + ", block=" +
         std::to_string(L.block()) + ", density=" + detail::py_float(L.density());
  else
    s += "pattern=" + detail::py_tuple(options.pattern().shape().vec()) +
         ", density=" + detail::py_float(pattern_density(options.pattern()));
  s += ", causal=" + detail::py_bool(options.causal()) +
       ", dropout=" + detail::py_float(options.dropout());
  if (options.scale()) s += ", scale=" + detail::py_float(*options.scale());
  return s + ")";
}

}  // namespace heed::nn
