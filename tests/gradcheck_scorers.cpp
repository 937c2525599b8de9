// gradcheck_scorers.cpp - finite-difference checks (double build) of the classic attention
// scorers: AdditiveAttention, LuongAttention (dot, general, low rank, concat), LuongCombine,
// LocalAttention (local-m, local-p). Each check covers the query, keys, values and every
// parameter, with a 2-D (decoder step) and a 3-D query, Tq != Tk, and a key padding mask
// whose last sequence is all padding (a fully masked row: zero context, zero gradient).
#include <heed/core/random.h>
#include <heed/autograd/ops/attention/additive_score.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attend.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/attention/local_attention.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/attention/additive_attention.h>
#include <heed/layers/attention/local_attention.h>
#include <heed/layers/attention/luong_attention.h>
#include <heed/layers/module.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

// B = 3 sequences of Tk = 5 keys: lengths 5, 3 and 0 (the last row is fully masked).
Tensor padding() { return heed::test::right_padding({5, 3, 0}, 5); }

// Context and weights as one output, so gradcheck sees both.
Tensor both(const nn::Attended& a) { return cat({flatten(a.context), flatten(a.weights)}); }

// The inputs followed by every parameter of m (gradcheck perturbs them in place).
V with_params(V xs, const nn::Module& m) {
  for (const Tensor& p : m.parameters()) xs.push_back(p);
  return xs;
}

Tensor query(bool step) { return param(step ? Shape{3, 4} : Shape{3, 2, 4}); }  // Tq = 2 != Tk = 5

// Every scorer module has forward(query, keys, values, mask): check it with separate
// values and with values = keys, for a 2-D and a 3-D query.
template <class M>
void check_scorer(M& attn, int64_t key_dim) {
  const nn::AttentionMask mask = nn::AttentionMask().key_padding(padding());
  for (bool step : {true, false}) {
    CAPTURE(step);
    Tensor q = query(step), k = param({3, 5, key_dim}), v = param({3, 5, 3});
    check_grad([&](const V& x) { return both(attn->forward(x[0], x[1], x[2], mask)); },
               with_params({q, k, v}, *attn));
    check_grad([&](const V& x) { return both(attn->forward(x[0], x[1], Tensor(), mask)); },
               with_params({q, k}, *attn));
  }
}

}  // namespace

TEST_CASE("gradcheck scorers: AdditiveAttention with and without the bias b") {
  manual_seed(501);
  nn::AdditiveAttention attn(nn::AdditiveAttentionOptions(4, 6, 5));
  check_scorer(attn, 6);
  nn::AdditiveAttention nobias(nn::AdditiveAttentionOptions(4, 6, 5).bias(false));
  check_scorer(nobias, 6);
}

TEST_CASE("gradcheck scorers: AdditiveAttention through precompute_keys, with a causal mask") {
  manual_seed(502);
  nn::AdditiveAttention attn(nn::AdditiveAttentionOptions(4, 6, 5));
  Tensor q = query(false), k = param({3, 5, 6});
  const nn::AttentionMask mask = nn::AttentionMask().key_padding(padding()).causal();
  check_grad([&](const V& x) { return both(attn->forward_projected(x[0], attn->precompute_keys(x[1]), x[1], mask)); },
             with_params({q, k}, *attn));
}

TEST_CASE("gradcheck scorers: LuongAttention dot, general, general rank 2, concat") {
  manual_seed(503);
  nn::LuongAttention dot(nn::LuongAttentionOptions(4, 4).score("dot"));
  check_scorer(dot, 4);
  nn::LuongAttention general(nn::LuongAttentionOptions(4, 6).score("general"));
  check_scorer(general, 6);
  nn::LuongAttention lowrank(nn::LuongAttentionOptions(4, 6).score("general").rank(2));
  check_scorer(lowrank, 6);
  nn::LuongAttention concat(nn::LuongAttentionOptions(4, 6).score("concat").attn_dim(5));
  check_scorer(concat, 6);
}

TEST_CASE("gradcheck scorers: LuongCombine h~ = tanh(W_c [c; s]) on 2-D and 3-D inputs") {
  manual_seed(504);
  nn::LuongCombine comb(nn::LuongCombineOptions(3, 4, 5));
  for (Shape lead : {Shape{3}, Shape{3, 2}}) {
    CAPTURE(lead);
    Shape cs = lead, ss = lead;
    cs.push_back(3);
    ss.push_back(4);
    check_grad([&](const V& x) { return comb->forward(x[0], x[1]); }, with_params({param(cs), param(ss)}, *comb));
  }
}

TEST_CASE("gradcheck scorers: LocalAttention local-m, p_t = t and given positions") {
  manual_seed(505);
  for (const char* score : {"general", "dot"}) {
    CAPTURE(score);
    nn::LocalAttention attn(nn::LocalAttentionOptions(4, score == std::string("dot") ? 4 : 6)
                                .mode("local-m").window(1).score(score));
    const int64_t Dk = attn->options.key_dim();
    const nn::AttentionMask mask = nn::AttentionMask().key_padding(padding());
    Tensor q3 = query(false), q2 = query(true), k = param({3, 5, Dk}), v = param({3, 5, 3});
    check_grad([&](const V& x) { return both(attn->forward(x[0], x[1], x[2], mask)); },
               with_params({q3, k, v}, *attn));
    const Tensor p2 = from_vector({4, 1, 2}, {3}), p3 = from_vector({0, 3, 2, 2, 1, 0}, {3, 2});
    check_grad([&](const V& x) { return both(attn->forward(x[0], x[1], x[2], mask, p2)); },
               with_params({q2, k, v}, *attn));
    check_grad([&](const V& x) { return both(attn->forward(x[0], x[1], Tensor(), mask, p3)); },
               with_params({q3, k}, *attn));
  }
}

TEST_CASE("gradcheck scorers: LocalAttention local-p, through p_t into W_p and v_p") {
  manual_seed(506);
  nn::LocalAttention attn(nn::LocalAttentionOptions(4, 6).mode("local-p").window(2));
  {  // spread p_t over the sentence, so the Gaussian's slope is not tiny
    NoGradGuard ng;
    attn->W_p.mul_(3);
    attn->v_p.mul_(3);
  }
  check_scorer(attn, 6);
  // Only the position predictor varies: every gradient it gets comes through p_t and the
  // Gaussian, and it must be non-zero (the window edge passes none).
  for (bool step : {true, false}) {
    CAPTURE(step);
    const Tensor q = query(step), k = randn({3, 5, 6}), v = randn({3, 5, 3});
    const nn::AttentionMask mask = nn::AttentionMask().key_padding(padding());
    check_grad([&](const V&) { return both(attn->forward(q, k, v, mask)); }, {attn->W_p, attn->v_p});
    attn->zero_grad();
    sum(attn->forward(q, k, v, mask).context * randn(step ? Shape{3, 3} : Shape{3, 2, 3})).backward();
    CHECK(sum(abs(attn->W_p.grad())).item() > 0);
    CHECK(sum(abs(attn->v_p.grad())).item() > 0);
  }
  nn::LocalAttention no_padding(nn::LocalAttentionOptions(4, 6).mode("local-p").window(1));
  Tensor q = query(false), k = param({3, 5, 6});  // S = Tk for every sequence
  check_grad([&](const V& x) { return both(no_padding->forward(x[0], x[1])); }, with_params({q, k}, *no_padding));
}

TEST_CASE("gradcheck scorers: a fully masked row has zero context, zero gradient, no NaN") {
  manual_seed(507);
  nn::AdditiveAttention add(nn::AdditiveAttentionOptions(4, 6, 5));
  nn::LuongAttention gen(nn::LuongAttentionOptions(4, 6).score("general"));
  nn::LuongAttention cat_(nn::LuongAttentionOptions(4, 6).score("concat"));
  nn::LocalAttention locm(nn::LocalAttentionOptions(4, 6).mode("local-m").window(1));
  nn::LocalAttention locp(nn::LocalAttentionOptions(4, 6).mode("local-p").window(2));
  using Fwd = std::function<nn::Attended(const Tensor&, const Tensor&, const nn::AttentionMask&)>;
  const std::vector<std::pair<nn::Module*, Fwd>> mods = {
      {add.get(), [&](auto& q, auto& k, auto& m) { return add->forward(q, k, Tensor(), m); }},
      {gen.get(), [&](auto& q, auto& k, auto& m) { return gen->forward(q, k, Tensor(), m); }},
      {cat_.get(), [&](auto& q, auto& k, auto& m) { return cat_->forward(q, k, Tensor(), m); }},
      {locm.get(), [&](auto& q, auto& k, auto& m) { return locm->forward(q, k, Tensor(), m); }},
      {locp.get(), [&](auto& q, auto& k, auto& m) { return locp->forward(q, k, Tensor(), m); }}};
  for (auto& [mod, fwd] : mods) {
    CAPTURE(mod->repr());
    Tensor q = query(false), k = param({3, 5, 6});
    mod->zero_grad();
    const nn::Attended a = fwd(q, k, nn::AttentionMask().key_padding(padding()));
    sum(a.context * randn({3, 2, 6}) + a.context).backward();
    bool finite = true, zero = true;
    for (int64_t i = 0; i < a.context.numel(); ++i) finite = finite && std::isfinite(a.context.data()[i]);
    for (int t = 0; t < 2; ++t)
      for (int j = 0; j < 6; ++j) zero = zero && a.context.at({2, t, j}) == 0;
    for (int t = 0; t < 2; ++t)
      for (int j = 0; j < 4; ++j) zero = zero && q.grad().at({2, t, j}) == 0;
    for (int s = 0; s < 5; ++s)
      for (int j = 0; j < 6; ++j) zero = zero && k.grad().at({2, s, j}) == 0;
    for (const Tensor& p : mod->parameters())
      for (int64_t i = 0; i < p.grad().numel(); ++i) finite = finite && std::isfinite(p.grad().data()[i]);
    CHECK(finite);
    CHECK(zero);
    // A batch of only that row: no parameter gets any gradient either.
    mod->zero_grad();
    const nn::Attended z = fwd(query(false), param({3, 5, 6}),
                               nn::AttentionMask().key_padding(zeros({3, 5})));
    sum(z.context * randn({3, 2, 6})).backward();
    for (const Tensor& p : mod->parameters())
      for (int64_t i = 0; p.grad().defined() && i < p.grad().numel(); ++i) CHECK(p.grad().data()[i] == 0);
  }
}

TEST_CASE("gradcheck scorers: the fused additive_score, and equal to its composed twin") {
  manual_seed(503);
  for (const Shape& qs : {Shape{3, 1, 5}, Shape{2, 3, 4}}) {  // a decoder step; Tq = 3 != Tk = 4
    CAPTURE(qs);
    const Tensor qp = param(qs), kp = param({qs[0], 4, qs[2]}), v = param({qs[2]});
    check_grad([](const V& x) { return additive_score(x[0], x[1], x[2]); }, {qp, kp, v});
    heed::test::check_fused_matches_composed(
        [](const V& x) { return additive_score(x[0], x[1], x[2]); },
        [](const V& x) { return additive_score_reference(x[0], x[1], x[2]); }, {qp, kp, v}, 1e-12, 1e-12);
  }
}
