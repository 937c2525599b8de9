// additive_attention.cpp - nn::AdditiveAttention (Bahdanau).
#include "additive_attention.h"

#include <cmath>

#include "../../autograd/ops/attention/additive_score.h"
#include "../../autograd/ops/linear.h"
#include "../../core/error.h"
#include "../init.h"
#include "../repr.h"

namespace heed::nn {

static const char* kOp = "AdditiveAttention";

AdditiveAttentionImpl::AdditiveAttentionImpl(const AdditiveAttentionOptions& opts) : options(opts) {
  HEED_CHECK(options.query_dim() > 0 && options.key_dim() > 0 && options.attn_dim() > 0, kOp,
             "query_dim, key_dim and attn_dim must be > 0; got ", options.query_dim(), ", ",
             options.key_dim(), " and ", options.attn_dim());
  HEED_CHECK(options.dropout() >= 0 && options.dropout() < 1, kOp,
             "dropout must be in [0, 1); got ", options.dropout());
  const int64_t A = options.attn_dim();
  W_s = register_parameter("W_s", empty({A, options.query_dim()}));
  W_h = register_parameter("W_h", empty({A, options.key_dim()}));
  if (options.bias()) b = register_parameter("b", empty({A}));
  v = register_parameter("v", empty({A}));
  reset_parameters();
}

// W_s, W_h: nn.Linear's kaiming_uniform_(a = sqrt(5)) = U(+-1/sqrt(fan_in)); b as W_s's
// nn.Linear bias, U(+-1/sqrt(Dq)); v as nn.Linear(A, 1, bias=False)'s weight, U(+-1/sqrt(A)).
void AdditiveAttentionImpl::reset_parameters() {
  init::kaiming_uniform_(W_s, std::sqrt(5.0));
  init::kaiming_uniform_(W_h, std::sqrt(5.0));
  if (b.defined()) {
    const double bound = 1 / std::sqrt(double(options.query_dim()));
    init::uniform_(b, -bound, bound);
  }
  const double bound = 1 / std::sqrt(double(options.attn_dim()));
  init::uniform_(v, -bound, bound);
}

Tensor AdditiveAttentionImpl::precompute_keys(const Tensor& keys) {
  detail::check_keys(kOp, keys, options.key_dim());
  return linear(keys, W_h);  // W_h h_j for every j: (B, Tk, A)
}

// e_tj = v^T tanh(W_s s_t + b + W_h h_j) for every (t, j) pair: one fused op
// (autograd/ops/attention/additive_score.h; its composed twin is tanh(qp.unsqueeze(2) + kp.unsqueeze(1)) @ v).
Tensor AdditiveAttentionImpl::score(const Tensor& query, const Tensor& projected_keys) {
  const Tensor qp = linear(query, W_s, b);        // (B, Tq, A)
  return additive_score(qp, projected_keys, v);  // (B, Tq, Tk)
}

Attended AdditiveAttentionImpl::forward(const Tensor& query, const Tensor& keys, const Tensor& values,
                                    const AttentionMask& mask) {
  return detail::scorer_forward(kOp, *this, query, keys, values, mask);
}

Attended AdditiveAttentionImpl::forward_projected(const Tensor& query, const Tensor& projected_keys,
                                              const Tensor& values, const AttentionMask& mask) {
  return detail::scorer_attend(kOp, *this, query, projected_keys, values, mask);
}

std::string AdditiveAttentionImpl::repr() const {
  return std::string(kOp) + "(query_dim=" + std::to_string(options.query_dim()) +
         ", key_dim=" + std::to_string(options.key_dim()) +
         ", attn_dim=" + std::to_string(options.attn_dim()) +
         ", bias=" + detail::py_bool(options.bias()) +
         ", dropout=" + detail::py_float(options.dropout()) + ")";
}

}  // namespace heed::nn
