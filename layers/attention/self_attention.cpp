// self_attention.cpp - nn::SelfAttention: three projections, then scaled dot-product attention.
#include "self_attention.h"

#include "../../autograd/ops/attention/scaled_dot_product.h"
#include "../../core/error.h"
#include "../repr.h"

namespace heed::nn {

SelfAttentionImpl::SelfAttentionImpl(const SelfAttentionOptions& opts) : options(opts) {
  HEED_CHECK(options.d_model() > 0, "SelfAttention", "d_model must be > 0, got ", options.d_model());
  HEED_CHECK(options.dropout() >= 0 && options.dropout() < 1, "SelfAttention",
             "dropout must be in [0, 1), got ", options.dropout());
  const int64_t d = options.d_model();
  if (options.d_k() <= 0) options.d_k(d);  // the options this module holds name its sizes
  if (options.d_v() <= 0) options.d_v(d);
  W_q = register_module("W_q", Linear(LinearOptions(d, options.d_k()).bias(options.bias())));
  W_k = register_module("W_k", Linear(LinearOptions(d, options.d_k()).bias(options.bias())));
  W_v = register_module("W_v", Linear(LinearOptions(d, options.d_v()).bias(options.bias())));
}

Attended SelfAttentionImpl::forward(const Tensor& x, const AttentionMask& mask) {
  HEED_CHECK(x.dim() == 3 && x.size(2) == options.d_model(), "SelfAttention", "input ", x.shape(),
             " is not (B, T, d_model = ", options.d_model(), ")");
  const Tensor q = W_q->forward(x);  // (B, T, d_k)
  const Tensor k = W_k->forward(x);  // (B, T, d_k)
  const Tensor v = W_v->forward(x);  // (B, T, d_v)
  return scaled_dot_product_attention(q, k, v, mask, {}, options.dropout(), is_training());
}

std::string SelfAttentionImpl::repr() const {
  std::string s = "SelfAttention(d_model=" + std::to_string(options.d_model()) +
                  ", d_k=" + std::to_string(options.d_k()) + ", d_v=" + std::to_string(options.d_v());
  if (!options.bias()) s += ", bias=False";
  if (options.dropout() > 0) s += ", dropout=" + detail::py_float(options.dropout());
  return s + ")";
}

}  // namespace heed::nn
