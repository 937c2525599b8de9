// local_attention.cpp - nn::LocalAttention: the base score and p_t; the window and the
// Gaussian are nn::local_attention (autograd/ops/attention/local_attention.h).
#include "local_attention.h"

#include <cmath>

#include "../../autograd/ops/arith.h"
#include "../../autograd/ops/linalg.h"
#include "../../autograd/ops/linear.h"
#include "../../autograd/ops/attention/local_attention.h"
#include "../../autograd/ops/reduce.h"
#include "../../autograd/ops/unary.h"
#include "../../core/error.h"
#include "../init.h"
#include "../repr.h"

namespace heed::nn {

static const char* kOp = "LocalAttention";

LocalAttentionImpl::LocalAttentionImpl(const LocalAttentionOptions& opts) : options(opts) {
  const std::string& m = options.mode();
  HEED_CHECK(m == "local-m" || m == "local-p", kOp, "mode must be 'local-m' or 'local-p'; got '", m, "'");
  HEED_CHECK(options.window() >= (m == "local-p" ? 1 : 0), kOp, "window (the half-width D) must be >= ",
             m == "local-p" ? "1 for local-p (sigma = D/2)" : "0", "; got ", options.window());
  if (options.predict_dim() <= 0) options.predict_dim(options.query_dim());  // its default, Dq
  HEED_CHECK(options.predict_dim() > 0, kOp, "predict_dim must be > 0; got ", options.predict_dim());
  HEED_CHECK(options.dropout() >= 0 && options.dropout() < 1, kOp,
             "dropout must be in [0, 1); got ", options.dropout());
  align = register_module("align", LuongAttention(
                                       LuongAttentionOptions(options.query_dim(), options.key_dim())
                                           .score(options.score())));
  if (m == "local-p") {
    W_p = register_parameter("W_p", empty({options.predict_dim(), options.query_dim()}));
    v_p = register_parameter("v_p", empty({options.predict_dim()}));
  }
  reset_parameters();
}

// W_p as an nn.Linear weight, U(+-1/sqrt(Dq)); v_p as nn.Linear(P, 1, bias=False)'s, U(+-1/sqrt(P)).
void LocalAttentionImpl::reset_parameters() {
  align->reset_parameters();
  if (!W_p.defined()) return;
  init::kaiming_uniform_(W_p, std::sqrt(5.0));
  const double bound = 1 / std::sqrt(double(options.predict_dim()));
  init::uniform_(v_p, -bound, bound);
}

// p_t = S * sigmoid(v_p^T tanh(W_p s_t))          query (B, [Tq,] Dq) -> (B, [Tq])
Tensor LocalAttentionImpl::predict_position(const Tensor& query, const AttentionMask& mask, int64_t Tk) {
  HEED_CHECK(W_p.defined(), kOp, "predict_position needs mode 'local-p'; this is '", options.mode(), "'");
  HEED_CHECK(query.defined() && (query.dim() == 2 || query.dim() == 3) &&
                 query.size(-1) == options.query_dim(),
             kOp, "query ", query.defined() ? query.shape() : Shape{}, " must be (B, ",
             options.query_dim(), ") or (B, Tq, ", options.query_dim(), ")");
  const Tensor z = matmul(tanh(linear(query, W_p)), v_p);  // v_p^T tanh(W_p s_t): (B, [Tq])
  const Tensor& kp = mask.key_padding();
  if (!kp.defined()) return sigmoid(z) * real(Tk);        // S = Tk for every sequence
  const int64_t B = query.size(0);
  HEED_CHECK(kp.dim() == 2 && kp.size(0) == B && kp.size(1) == Tk, kOp, "key padding mask ",
             kp.shape(), " must be (", B, ", ", Tk, ") for query ", query.shape());
  check_mask_values(kOp, "key padding mask", kp);  // S counts the 1s
  const Shape s = query.dim() == 3 ? Shape{B, 1} : Shape{B};
  const Tensor S = sum(kp.detach(), 1).reshape(s);       // real keys per sequence
  return sigmoid(z) * S;
}

Attended LocalAttentionImpl::forward(const Tensor& query, const Tensor& keys, const Tensor& values,
                                 const AttentionMask& mask, const Tensor& positions) {
  detail::check_keys(kOp, keys, options.key_dim(), query);
  return forward_projected(query, precompute_keys(keys), values.defined() ? values : keys, mask,
                           positions);
}

Attended LocalAttentionImpl::forward_projected(const Tensor& query, const Tensor& projected_keys,
                                           const Tensor& values, const AttentionMask& mask,
                                           const Tensor& positions) {
  const bool local_p = options.mode() == "local-p";
  const detail::ScorerStep in = detail::scorer_inputs(kOp, query, options.query_dim(), projected_keys,
                                                      align->projected_dim(), values, mask);
  const int64_t B = in.query.size(0), Tq = in.query.size(1), Tk = projected_keys.size(1);

  // The aligned position p_t, (B or 1, Tq, 1).
  Tensor p;
  if (local_p) {
    HEED_CHECK(!positions.defined(), kOp, "local-p predicts p_t; positions ", positions.shape(),
               " are for local-m");
    p = predict_position(in.query, in.mask, Tk).unsqueeze(2);
  } else if (positions.defined()) {
    const Shape want = in.step ? Shape{B} : Shape{B, Tq};
    HEED_CHECK(positions.shape() == want, kOp, "positions ", positions.shape(), " must be ", want,
               " for query ", query.shape());
    p = positions.detach().reshape({B, Tq, 1});
  } else {
    HEED_CHECK(!in.step, kOp, "local-m with a 2-D query ", query.shape(),
               " (one decoder step) needs its positions p_t, shape (", B, ")");
    p = arange(real(Tq)).reshape({1, Tq, 1});  // p_t = t
  }
  return in.finish(local_attention(kOp, align->score(in.query, projected_keys), values, p,
                                   options.window(), local_p, in.mask, options.dropout(),
                                   is_training()));
}

std::string LocalAttentionImpl::repr() const {
  std::string s = std::string(kOp) + "(query_dim=" + std::to_string(options.query_dim()) +
                  ", key_dim=" + std::to_string(options.key_dim()) + ", mode='" + options.mode() +
                  "', window=" + std::to_string(options.window());
  if (options.mode() == "local-p") s += ", predict_dim=" + std::to_string(options.predict_dim());
  return s + ", dropout=" + detail::py_float(options.dropout()) + ")";
}

}  // namespace heed::nn
