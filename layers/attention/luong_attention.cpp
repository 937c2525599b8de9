// luong_attention.cpp - nn::LuongAttention (dot / general / low-rank general / concat
// scores) and nn::LuongCombine. Masking, softmax and the weighted sum: attend().
#include "luong_attention.h"

#include <cmath>
#include <string>

#include "../../autograd/ops/attention/additive_score.h"
#include "../../autograd/ops/arith.h"
#include "../../autograd/ops/linalg.h"
#include "../../autograd/ops/linear.h"
#include "../../autograd/ops/shape.h"
#include "../../autograd/ops/unary.h"
#include "../../core/error.h"
#include "../init.h"
#include "../repr.h"

namespace heed::nn {

static const char* kOp = "LuongAttention";

// ---- the scores: one row each, with everything that differs between them ----
//
// A score is found by options.score() and whether rank > 0. Its row holds, in order: the
// check its options must pass, the parameters it registers (name, member, shape; at most
// two), the size P of its projected
// keys, the key side (keys (B, Tk, Dk) -> (B, Tk, P)), the score from the query (B, Tq, Dq)
// and the projected keys (-> (B, Tq, Tk), unmasked), and the option its repr adds.
namespace detail {
using Options = LuongAttentionOptions;
struct LuongParam {
  const char* name;  // null: no parameter
  Tensor LuongAttentionImpl::*member;
  Shape (*shape)(const Options& o);
};
struct LuongScore {
  const char* name;  // options.score()
  bool low_rank;     // rank > 0
  const char* formula;
  void (*check)(const Options& o);
  LuongParam parameters[2];
  int64_t (*projected_dim)(const Options& o);
  Tensor (*project_keys)(const LuongAttentionImpl& m, const Tensor& keys);
  Tensor (*score)(const LuongAttentionImpl& m, const Tensor& query, const Tensor& kp);
  std::string (*repr)(const Options& o);  // ", rank=2"
};

static void no_check(const Options&) {}
static std::string rank_repr(const Options& o) { return ", rank=" + std::to_string(o.rank()); }

static const LuongScore kLuongScores[] = {
    {"dot", false, "e_tj = s_t^T h_j",
     [](const Options& o) {
       HEED_CHECK(o.query_dim() == o.key_dim(), kOp, "the dot score s_t^T h_j needs query_dim == "
                  "key_dim; got ", o.query_dim(), " and ", o.key_dim());
     },
     {},
     [](const Options& o) { return o.key_dim(); },
     [](const LuongAttentionImpl&, const Tensor& keys) { return keys; },  // h_j
     [](const LuongAttentionImpl&, const Tensor& q, const Tensor& kp) {
       return matmul(q, transpose(kp, 1, 2));                             // (B, Tq, Dk) x (B, Dk, Tk)
     },
     [](const Options&) { return std::string(); }},
    {"general", false, "e_tj = s_t^T W_a h_j", no_check,
     {{"W_a", &LuongAttentionImpl::W_a, [](const Options& o) { return Shape{o.query_dim(), o.key_dim()}; }}},
     [](const Options& o) { return o.query_dim(); },
     [](const LuongAttentionImpl& m, const Tensor& keys) { return linear(keys, m.W_a); },  // W_a h_j
     [](const LuongAttentionImpl&, const Tensor& q, const Tensor& kp) {
       return matmul(q, transpose(kp, 1, 2));                             // s_t^T (W_a h_j)
     },
     rank_repr},
    {"general", true, "e_tj = (Q s_t)^T (K h_j)", no_check,
     {{"Q", &LuongAttentionImpl::Q, [](const Options& o) { return Shape{o.rank(), o.query_dim()}; }},
      {"K", &LuongAttentionImpl::K, [](const Options& o) { return Shape{o.rank(), o.key_dim()}; }}},
     [](const Options& o) { return o.rank(); },
     [](const LuongAttentionImpl& m, const Tensor& keys) { return linear(keys, m.K); },    // K h_j
     [](const LuongAttentionImpl& m, const Tensor& q, const Tensor& kp) {
       return matmul(linear(q, m.Q), transpose(kp, 1, 2));                // (B, Tq, r) x (B, r, Tk)
     },
     rank_repr},
    {"concat", false, "e_tj = v_a^T tanh(W_a[:, :Dq] s_t + W_a[:, Dq:] h_j)", no_check,
     {{"W_a", &LuongAttentionImpl::W_a,
       [](const Options& o) { return Shape{o.attn_dim(), o.query_dim() + o.key_dim()}; }},
      {"v_a", &LuongAttentionImpl::v_a, [](const Options& o) { return Shape{o.attn_dim()}; }}},
     [](const Options& o) { return o.attn_dim(); },
     [](const LuongAttentionImpl& m, const Tensor& keys) {                // W_a[:, Dq:] h_j (B, Tk, A)
       const int64_t Dq = m.options.query_dim();
       return linear(keys, slice(m.W_a, 1, Dq, Dq + m.options.key_dim()));
     },
     [](const LuongAttentionImpl& m, const Tensor& q, const Tensor& kp) {
       const Tensor qp = linear(q, slice(m.W_a, 1, 0, m.options.query_dim()));  // (B, Tq, A)
       return additive_score(qp, kp, m.v_a);  // (B, Tq, Tk): autograd/ops/attention/additive_score.h
     },
     [](const Options& o) { return ", attn_dim=" + std::to_string(o.attn_dim()); }},
};

// The row for these options, or a heed::Error naming the scores the table has.
static const LuongScore& find_score(const Options& o) {
  std::string names;
  for (const LuongScore& s : kLuongScores) {
    if (o.score() == s.name && (o.rank() > 0) == s.low_rank) return s;
    if (names.find(s.name) == std::string::npos) names += std::string(names.empty() ? "'" : ", '") + s.name + "'";
  }
  for (const LuongScore& s : kLuongScores)
    HEED_CHECK(o.score() != s.name, kOp, "rank must be 0, or > 0 with the 'general' score; got rank ",
               o.rank(), " with '", o.score(), "'");
  fail(kOp, "score must be one of ", names, "; got '", o.score(), "'");
}
}  // namespace detail

LuongAttentionImpl::LuongAttentionImpl(const LuongAttentionOptions& opts) : options(opts) {
  const int64_t Dq = options.query_dim(), Dk = options.key_dim();
  HEED_CHECK(Dq > 0 && Dk > 0, kOp, "query_dim and key_dim must be > 0; got ", Dq, " and ", Dk);
  HEED_CHECK(options.rank() >= 0, kOp, "rank must be 0, or > 0 with the 'general' score; got rank ",
             options.rank());
  kind_ = &detail::find_score(options);
  kind_->check(options);
  if (options.attn_dim() <= 0) options.attn_dim(Dq);  // its default: the module holds the size
  HEED_CHECK(options.attn_dim() > 0, kOp, "attn_dim must be > 0; got ", options.attn_dim());
  HEED_CHECK(options.dropout() >= 0 && options.dropout() < 1, kOp,
             "dropout must be in [0, 1); got ", options.dropout());
  for (const detail::LuongParam& p : kind_->parameters)
    if (p.name) this->*p.member = register_parameter(p.name, empty(p.shape(options)));
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

int64_t LuongAttentionImpl::projected_dim() const { return kind_->projected_dim(options); }

Tensor LuongAttentionImpl::precompute_keys(const Tensor& keys) {
  nn::detail::check_keys(kOp, keys, options.key_dim());
  return kind_->project_keys(*this, keys);
}

Tensor LuongAttentionImpl::score(const Tensor& query, const Tensor& kp) {
  return kind_->score(*this, query, kp);
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
  return std::string(kOp) + "(query_dim=" + std::to_string(options.query_dim()) +
         ", key_dim=" + std::to_string(options.key_dim()) + ", score='" + options.score() + "'" +
         kind_->repr(options) + ", dropout=" + nn::detail::py_float(options.dropout()) + ")";
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
