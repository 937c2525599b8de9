// luong_attention.cpp - nn::LuongAttention (dot / general / low-rank general / concat
// scores) and nn::LuongCombine. Masking, softmax and the weighted sum: attend().
#include "luong_attention.h"

#include <cmath>

#include "../../autograd/attention/additive_score.h"
#include "../../autograd/arith.h"
#include "../../autograd/linalg.h"
#include "../../autograd/linear_op.h"
#include "../../autograd/shape_ops.h"
#include "../../autograd/unary.h"
#include "../../core/error.h"
#include "../init.h"
#include "../repr.h"

namespace heed::nn {

static const char* kOp = "LuongAttention";

LuongAttentionImpl::LuongAttentionImpl(const LuongAttentionOptions& opts) : options(opts) {
  const int64_t Dq = options.query_dim(), Dk = options.key_dim(), r = options.rank();
  const std::string& s = options.score();
  HEED_CHECK(Dq > 0 && Dk > 0, kOp, "query_dim and key_dim must be > 0; got ", Dq, " and ", Dk);
  HEED_CHECK(s == "dot" || s == "general" || s == "concat", kOp,
             "score must be 'dot', 'general' or 'concat'; got '", s, "'");
  HEED_CHECK(s != "dot" || Dq == Dk, kOp, "the dot score s_t^T h_j needs query_dim == key_dim; got ",
             Dq, " and ", Dk);
  HEED_CHECK(r == 0 || (r > 0 && s == "general"), kOp,
             "rank must be 0, or > 0 with the 'general' score; got rank ", r, " with '", s, "'");
  if (options.attn_dim() <= 0) options.attn_dim(Dq);  // its default: the module holds the size
  HEED_CHECK(options.attn_dim() > 0, kOp, "attn_dim must be > 0; got ", options.attn_dim());
  HEED_CHECK(options.dropout() >= 0 && options.dropout() < 1, kOp,
             "dropout must be in [0, 1); got ", options.dropout());
  if (s == "general" && r == 0) {
    W_a = register_parameter("W_a", empty({Dq, Dk}));
  } else if (s == "general") {
    Q = register_parameter("Q", empty({r, Dq}));
    K = register_parameter("K", empty({r, Dk}));
  } else if (s == "concat") {
    W_a = register_parameter("W_a", empty({options.attn_dim(), Dq + Dk}));
    v_a = register_parameter("v_a", empty({options.attn_dim()}));
  }
  reset_parameters();
}

// Each W (and Q, K) as an nn.Linear weight: kaiming_uniform_(a = sqrt(5)) = U(+-1/sqrt(fan_in)),
// fan_in its second dim; v_a as nn.Linear(A, 1, bias=False)'s weight, U(+-1/sqrt(A)).
void LuongAttentionImpl::reset_parameters() {
  for (Tensor* w : {&W_a, &Q, &K})
    if (w->defined()) init::kaiming_uniform_(*w, std::sqrt(5.0));
  if (v_a.defined()) {
    const double bound = 1 / std::sqrt(double(options.attn_dim()));
    init::uniform_(v_a, -bound, bound);
  }
}

int64_t LuongAttentionImpl::projected_dim() const {
  const std::string& s = options.score();
  if (s == "dot") return options.key_dim();
  if (s == "concat") return options.attn_dim();
  return options.rank() > 0 ? options.rank() : options.query_dim();
}

// The key side of each score, for every j:  keys (B, Tk, Dk) -> (B, Tk, P)
Tensor LuongAttentionImpl::precompute_keys(const Tensor& keys) {
  detail::check_keys(kOp, keys, options.key_dim());
  const std::string& s = options.score();
  if (s == "dot") return keys;                                  // h_j
  if (s == "concat") {                                          // W_a[:, Dq:] h_j
    const int64_t Dq = options.query_dim();
    return linear(keys, slice(W_a, 1, Dq, Dq + options.key_dim()));
  }
  return options.rank() > 0 ? linear(keys, K)                   // K h_j
                            : linear(keys, W_a);                // W_a h_j
}

// e_tj from the query (B, Tq, Dq) and the projected keys kp (B, Tk, P) -> (B, Tq, Tk)
Tensor LuongAttentionImpl::score(const Tensor& query, const Tensor& kp) {
  const std::string& s = options.score();
  if (s == "concat") {  // v_a^T tanh(W_a[:, :Dq] s_t + W_a[:, Dq:] h_j)
    const Tensor qp = linear(query, slice(W_a, 1, 0, options.query_dim()));  // (B, Tq, A)
    return additive_score(qp, kp, v_a);  // (B, Tq, Tk): autograd/attention/additive_score.h
  }
  const Tensor kt = transpose(kp, 1, 2);                     // (B, P, Tk)
  if (s == "general" && options.rank() > 0)
    return matmul(linear(query, Q), kt);                     // (Q s_t)^T (K h_j)
  return matmul(query, kt);                                  // s_t^T h_j  or  s_t^T (W_a h_j)
}

Attended LuongAttentionImpl::forward(const Tensor& query, const Tensor& keys, const Tensor& values,
                                 const AttentionMask& mask) {
  return detail::scorer_forward(kOp, *this, query, keys, values, mask);
}

Attended LuongAttentionImpl::forward_projected(const Tensor& query, const Tensor& projected_keys,
                                           const Tensor& values, const AttentionMask& mask) {
  return detail::scorer_attend(kOp, *this, query, projected_keys, values, mask);
}

std::string LuongAttentionImpl::repr() const {
  std::string s = std::string(kOp) + "(query_dim=" + std::to_string(options.query_dim()) +
                  ", key_dim=" + std::to_string(options.key_dim()) + ", score='" + options.score() + "'";
  if (options.score() == "general") s += ", rank=" + std::to_string(options.rank());
  if (options.score() == "concat") s += ", attn_dim=" + std::to_string(options.attn_dim());
  return s + ", dropout=" + detail::py_float(options.dropout()) + ")";
}

// ---- LuongCombine ----

LuongCombineImpl::LuongCombineImpl(const LuongCombineOptions& opts) : options(opts) {
  HEED_CHECK(options.context_dim() > 0 && options.query_dim() > 0 && options.out_dim() > 0,
             "LuongCombine", "context_dim, query_dim and out_dim must be > 0; got ",
             options.context_dim(), ", ", options.query_dim(), " and ", options.out_dim());
  W_c = register_parameter("W_c", empty({options.out_dim(), options.context_dim() + options.query_dim()}));
  reset_parameters();
}

void LuongCombineImpl::reset_parameters() { init::kaiming_uniform_(W_c, std::sqrt(5.0)); }

// h~_t = tanh(W_c [c_t; s_t])
Tensor LuongCombineImpl::forward(const Tensor& context, const Tensor& query) {
  bool ok = context.defined() && query.defined() && context.dim() >= 1 &&
            context.dim() == query.dim() && context.size(-1) == options.context_dim() &&
            query.size(-1) == options.query_dim();
  for (int d = 0; ok && d + 1 < context.dim(); ++d) ok = context.size(d) == query.size(d);
  HEED_CHECK(ok, "LuongCombine", "context ", context.defined() ? context.shape() : Shape{},
             " and query ", query.defined() ? query.shape() : Shape{}, " must be (..., ",
             options.context_dim(), ") and (..., ", options.query_dim(), ") with the same leading dims");
  return tanh(linear(cat({context, query}, -1), W_c));  // (..., Do)
}

std::string LuongCombineImpl::repr() const {
  return "LuongCombine(context_dim=" + std::to_string(options.context_dim()) +
         ", query_dim=" + std::to_string(options.query_dim()) +
         ", out_dim=" + std::to_string(options.out_dim()) + ")";
}

}  // namespace heed::nn
