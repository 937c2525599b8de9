// additive_attention.cpp - nn::AdditiveAttention (Bahdanau) and the input conventions
// every scorer module shares (detail::scorer_inputs).
#include "additive_attention.h"

#include <cmath>

#include "../autograd/arith.h"
#include "../autograd/linalg.h"
#include "../autograd/linear_op.h"
#include "../autograd/unary.h"
#include "../core/error.h"
#include "init.h"
#include "repr.h"

namespace heed::nn {

namespace detail {

void check_keys(const char* op, const Tensor& keys, int64_t key_dim, const Tensor& query) {
  const bool batched = query.defined() && query.dim() >= 2;
  HEED_CHECK(keys.defined() && keys.dim() == 3 && keys.size(2) == key_dim &&
                 (!batched || keys.size(0) == query.size(0)),
             op, "keys ", keys.defined() ? keys.shape() : Shape{}, " must be (",
             batched ? std::to_string(query.size(0)) : "B", ", Tk, ", key_dim, ")",
             batched ? " for query " + query.shape().str() : "");
}

ScorerStep scorer_inputs(const char* op, const Tensor& query, int64_t query_dim,
                         const Tensor& projected_keys, int64_t projected_dim,
                         const Tensor& values, const AttentionMask& mask) {
  HEED_CHECK(query.defined() && (query.dim() == 2 || query.dim() == 3) &&
                 query.size(-1) == query_dim,
             op, "query ", query.defined() ? query.shape() : Shape{}, " must be (B, ", query_dim,
             ") or (B, Tq, ", query_dim, ")");
  const int64_t B = query.size(0);
  const Tensor& pk = projected_keys;
  HEED_CHECK(pk.defined() && pk.dim() == 3 && pk.size(0) == B && pk.size(2) == projected_dim, op,
             "projected keys ", pk.defined() ? pk.shape() : Shape{}, " must be (", B, ", Tk, ",
             projected_dim, ") for query ", query.shape());
  HEED_CHECK(values.defined() && values.dim() == 3 && values.size(0) == B &&
                 values.size(1) == pk.size(1),
             op, "values ", values.defined() ? values.shape() : Shape{}, " must be (", B, ", ",
             pk.size(1), ", Dv) for query ", query.shape(), " and keys of length ", pk.size(1));
  ScorerStep in;
  in.step = query.dim() == 2;
  in.query = in.step ? query.unsqueeze(1) : query;  // (B, Tq, Dq)
  in.mask = mask;
  if (in.step && mask.mask().defined() && mask.mask().dim() == 2)  // (B, Tk) -> (B, 1, Tk)
    in.mask.mask(mask.mask().unsqueeze(1));
  return in;
}

Attended ScorerStep::finish(Attended a) const {
  if (step) {  // (B, 1, Dv) -> (B, Dv), (B, 1, Tk) -> (B, Tk)
    a.context = a.context.squeeze(1);
    a.weights = a.weights.squeeze(1);
  }
  return a;
}

}  // namespace detail

static const char* kOp = "AdditiveAttention";

AdditiveAttention::AdditiveAttention(const AdditiveAttentionOptions& opts) : options(opts) {
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
void AdditiveAttention::reset_parameters() {
  init::kaiming_uniform_(W_s, std::sqrt(5.0));
  init::kaiming_uniform_(W_h, std::sqrt(5.0));
  if (b.defined()) {
    const double bound = 1 / std::sqrt(double(options.query_dim()));
    init::uniform_(b, -bound, bound);
  }
  const double bound = 1 / std::sqrt(double(options.attn_dim()));
  init::uniform_(v, -bound, bound);
}

Tensor AdditiveAttention::precompute_keys(const Tensor& keys) {
  detail::check_keys(kOp, keys, options.key_dim());
  return linear(keys, W_h);  // W_h h_j for every j: (B, Tk, A)
}

// e_tj = v^T tanh(W_s s_t + b + W_h h_j), every (t, j) pair by broadcasting:
//   (B, Tq, 1, A) + (B, 1, Tk, A) -> (B, Tq, Tk, A) -> tanh -> . v -> (B, Tq, Tk)
Tensor AdditiveAttention::score(const Tensor& query, const Tensor& projected_keys) {
  const Tensor qp = linear(query, W_s, b);                                      // (B, Tq, A)
  const Tensor act = tanh(qp.unsqueeze(2) + projected_keys.unsqueeze(1));   // (B, Tq, Tk, A)
  return matmul(act, v);                                                    // (B, Tq, Tk)
}

Attended AdditiveAttention::forward(const Tensor& query, const Tensor& keys, const Tensor& values,
                                    const AttentionMask& mask) {
  detail::check_keys(kOp, keys, options.key_dim(), query);
  return forward_projected(query, precompute_keys(keys), values.defined() ? values : keys, mask);
}

Attended AdditiveAttention::forward_projected(const Tensor& query, const Tensor& projected_keys,
                                              const Tensor& values, const AttentionMask& mask) {
  const detail::ScorerStep in = detail::scorer_inputs(kOp, query, options.query_dim(), projected_keys,
                                                      options.attn_dim(), values, mask);
  const Tensor e = score(in.query, projected_keys);  // (B, Tq, Tk)
  return in.finish(attend(kOp, e, values, in.mask, options.dropout(), is_training()));
}

std::string AdditiveAttention::repr() const {
  return std::string(kOp) + "(query_dim=" + std::to_string(options.query_dim()) +
         ", key_dim=" + std::to_string(options.key_dim()) +
         ", attn_dim=" + std::to_string(options.attn_dim()) +
         ", bias=" + detail::py_bool(options.bias()) +
         ", dropout=" + detail::py_float(options.dropout()) + ")";
}

}  // namespace heed::nn
