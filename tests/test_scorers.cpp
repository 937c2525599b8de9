// test_scorers.cpp - behaviour of the classic attention scorers (float build):
// AdditiveAttention, LuongAttention, LuongCombine, LocalAttention. Their gradients are
// checked in gradcheck_scorers.cpp and their values against PyTorch in test_golden_scorers.cpp.
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

#include <heed/core/random.h>
#include <heed/autograd/ops/attention/additive_score.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attend.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/attention/local_attention.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/attention/additive_attention.h>
#include <heed/layers/linear.h>
#include <heed/layers/attention/local_attention.h>
#include <heed/layers/attention/luong_attention.h>
#include <heed/layers/module.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;
using heed::test::allclose;

namespace {

// B = 2 sequences of Tk = 5 keys, lengths 5 and 3.
Tensor padding() { return from_vector({1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, {2, 5}); }

using Fwd = std::function<nn::Attended(const Tensor& q, const Tensor& k, const nn::AttentionMask& m)>;

// Every global scorer, built for Dq = 4, Dk = 6 (dot: Dk = 4), as (name, key dim, forward, module).
struct Scorer {
  std::string name;
  int64_t key_dim;
  std::shared_ptr<nn::Module> module;
  Fwd forward;
};

std::vector<Scorer> scorers() {
  auto add = nn::AdditiveAttention(nn::AdditiveAttentionOptions(4, 6, 5));
  auto dot = nn::LuongAttention(nn::LuongAttentionOptions(4, 4).score("dot"));
  auto gen = nn::LuongAttention(nn::LuongAttentionOptions(4, 6));
  auto low = nn::LuongAttention(nn::LuongAttentionOptions(4, 6).rank(2));
  auto con = nn::LuongAttention(nn::LuongAttentionOptions(4, 6).score("concat"));
  auto luong = [](nn::LuongAttention m) {
    return [m](const Tensor& q, const Tensor& k, const nn::AttentionMask& mk) mutable { return m->forward(q, k, Tensor(), mk); };
  };
  return {{"additive", 6, add.ptr(), [add](auto& q, auto& k, auto& m) mutable { return add->forward(q, k, Tensor(), m); }},
          {"dot", 4, dot.ptr(), luong(dot)},
          {"general", 6, gen.ptr(), luong(gen)},
          {"general rank 2", 6, low.ptr(), luong(low)},
          {"concat", 6, con.ptr(), luong(con)}};
}

}  // namespace

TEST_CASE("scorers: weights sum to 1 over the visible keys and are 0 on padding") {
  manual_seed(601);
  for (const Scorer& s : scorers()) {
    CAPTURE(s.name);
    const Tensor q = randn({2, 3, 4}), k = randn({2, 5, s.key_dim});
    const nn::Attended a = s.forward(q, k, nn::AttentionMask().key_padding(padding()));
    CHECK(a.context.shape() == Shape{2, 3, s.key_dim});
    CHECK(a.weights.shape() == Shape{2, 3, 5});
    for (int t = 0; t < 3; ++t) {
      CHECK(a.weights.at({1, t, 3}) == 0);
      CHECK(a.weights.at({1, t, 4}) == 0);
      for (int b = 0; b < 2; ++b) {
        double total = 0;
        for (int j = 0; j < 5; ++j) total += a.weights.at({b, t, j});
        CHECK(total == doctest::Approx(1).epsilon(1e-6));
      }
    }
    // c_t = sum_j alpha_tj h_j, by hand
    CHECK(allclose(a.context, matmul(a.weights, k), 1e-5, 1e-6));
  }
}

TEST_CASE("scorers: a 2-D query is the 3-D query with Tq = 1; a (B, Tk) mask is the key padding") {
  manual_seed(602);
  for (const Scorer& s : scorers()) {
    CAPTURE(s.name);
    const Tensor q = randn({2, 4}), k = randn({2, 5, s.key_dim});
    const nn::AttentionMask pad = nn::AttentionMask().key_padding(padding());
    const nn::Attended a2 = s.forward(q, k, pad), a3 = s.forward(q.reshape({2, 1, 4}), k, pad);
    CHECK(a2.context.shape() == Shape{2, s.key_dim});
    CHECK(a2.weights.shape() == Shape{2, 5});
    CHECK(allclose(a2.context, a3.context.reshape({2, s.key_dim}), 1e-6, 1e-7));
    CHECK(allclose(a2.weights, a3.weights.reshape({2, 5}), 1e-6, 1e-7));
    const nn::Attended full = s.forward(q, k, nn::AttentionMask().mask(padding()));
    CHECK(allclose(full.weights, a2.weights, 1e-6, 1e-7));
  }
}

TEST_CASE("scorers: forward_projected(precompute_keys(h)) is forward(h), step by step") {
  manual_seed(603);
  nn::AdditiveAttention add(nn::AdditiveAttentionOptions(4, 6, 5));
  nn::LuongAttention con(nn::LuongAttentionOptions(4, 6).score("concat"));
  nn::LuongAttention low(nn::LuongAttentionOptions(4, 6).rank(3));
  nn::LocalAttention loc(nn::LocalAttentionOptions(4, 6).window(2));
  const Tensor h = randn({2, 5, 6}), v = randn({2, 5, 3});
  const nn::AttentionMask pad = nn::AttentionMask().key_padding(padding());
  const Tensor hp_add = add->precompute_keys(h), hp_con = con->precompute_keys(h),
               hp_low = low->precompute_keys(h), hp_loc = loc->precompute_keys(h);  // once
  CHECK(hp_add.shape() == Shape{2, 5, 5});
  CHECK(hp_low.shape() == Shape{2, 5, 3});
  for (int t = 0; t < 4; ++t) {  // a decoder loop: a new s_t at every step
    const Tensor s = randn({2, 4});
    CHECK(allclose(add->forward_projected(s, hp_add, v, pad).context, add->forward(s, h, v, pad).context, 1e-6, 1e-7));
    CHECK(allclose(con->forward_projected(s, hp_con, v, pad).context, con->forward(s, h, v, pad).context, 1e-6, 1e-7));
    CHECK(allclose(low->forward_projected(s, hp_low, v, pad).weights, low->forward(s, h, v, pad).weights, 1e-6, 1e-7));
    CHECK(allclose(loc->forward_projected(s, hp_loc, v, pad).weights, loc->forward(s, h, v, pad).weights, 1e-6, 1e-7));
  }
}

TEST_CASE("scorers: parameter counts; low-rank general has r * (Dq + Dk), as computed by hand") {
  // worked example: d = 512, d_Q = 64 -> 262,144 for M, 65,536 for Q and K
  CHECK(nn::LuongAttention(nn::LuongAttentionOptions(512, 512))->num_parameters() == 262144);
  CHECK(nn::LuongAttention(nn::LuongAttentionOptions(512, 512).rank(64))->num_parameters() == 65536);
  nn::LuongAttention low(nn::LuongAttentionOptions(4, 6).rank(2));
  CHECK(low->num_parameters() == 2 * (4 + 6));
  CHECK(low->Q.shape() == Shape{2, 4});
  CHECK(low->K.shape() == Shape{2, 6});
  CHECK(!low->W_a.defined());
  CHECK(nn::LuongAttention(nn::LuongAttentionOptions(4, 4).score("dot"))->num_parameters() == 0);
  CHECK(nn::LuongAttention(nn::LuongAttentionOptions(4, 6).score("concat").attn_dim(5))->num_parameters() ==
        5 * 10 + 5);
  CHECK(nn::AdditiveAttention(nn::AdditiveAttentionOptions(4, 6, 5))->num_parameters() == 5 * 4 + 5 * 6 + 5 + 5);
  CHECK(nn::LuongCombine(nn::LuongCombineOptions(3, 4, 5))->num_parameters() == 5 * 7);
  nn::LocalAttention p(nn::LocalAttentionOptions(4, 6).predict_dim(3));
  CHECK(p->num_parameters() == 4 * 6 + 3 * 4 + 3);
  std::vector<std::string> names;
  for (auto& [n, t] : p->named_parameters()) names.push_back(n);
  CHECK(names == std::vector<std::string>{"W_p", "v_p", "align.W_a"});
}

TEST_CASE("scorers: PyTorch-style init bounds and repr") {
  manual_seed(604);
  nn::AdditiveAttention add(nn::AdditiveAttentionOptions(16, 25, 9));
  auto within = [](const Tensor& t, double bound) {
    double m = 0;
    for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, double(std::fabs(t.data()[i])));
    return m <= bound && m > 0.5 * bound;
  };
  CHECK(within(add->W_s, 1 / 4.0));
  CHECK(within(add->W_h, 1 / 5.0));
  CHECK(within(add->b, 1 / 4.0));
  CHECK(within(add->v, 1 / 3.0));
  nn::LuongAttention con(nn::LuongAttentionOptions(16, 9).score("concat").attn_dim(4));
  CHECK(within(con->W_a, 1 / 5.0));
  CHECK(within(con->v_a, 1 / 2.0));
  CHECK(add->repr() == "AdditiveAttention(query_dim=16, key_dim=25, attn_dim=9, bias=True, dropout=0.0)");
  CHECK(con->repr() == "LuongAttention(query_dim=16, key_dim=9, score='concat', attn_dim=4, dropout=0.0)");
  CHECK(nn::LuongAttention(nn::LuongAttentionOptions(4, 6).rank(2))->repr() ==
        "LuongAttention(query_dim=4, key_dim=6, score='general', rank=2, dropout=0.0)");
  CHECK(nn::LuongCombine(nn::LuongCombineOptions(6, 4, 5))->repr() == "LuongCombine(context_dim=6, query_dim=4, out_dim=5)");
  nn::LocalAttention loc(nn::LocalAttentionOptions(4, 6).window(2).dropout(0.1));
  CHECK(loc->repr() == "LocalAttention(query_dim=4, key_dim=6, mode='local-p', window=2, predict_dim=4, dropout=0.1)");
  CHECK(loc->summary().find("(align): LuongAttention(query_dim=4, key_dim=6, score='general'") != std::string::npos);
}

TEST_CASE("scorers: LuongCombine is tanh(W_c [c; s]); concat's split W_a is the literal [s_t; h_j]") {
  manual_seed(605);
  nn::LuongCombine comb(nn::LuongCombineOptions(3, 4, 5));
  const Tensor c = randn({2, 3}), s = randn({2, 4});
  CHECK(allclose(comb->forward(c, s), tanh(matmul(cat({c, s}, 1), transpose(comb->W_c, 0, 1))), 1e-5, 1e-6));

  nn::LuongAttention con(nn::LuongAttentionOptions(4, 6).score("concat").attn_dim(5));
  const Tensor q = randn({1, 2, 4}), h = randn({1, 3, 6});
  const Tensor e = con->score(q, con->precompute_keys(h));  // (1, 2, 3)
  for (int t = 0; t < 2; ++t)
    for (int j = 0; j < 3; ++j) {
      const Tensor pair = cat({slice(q.reshape({2, 4}), 0, t, t + 1),
                               slice(h.reshape({3, 6}), 0, j, j + 1)}, 1);  // [s_t; h_j] (1, 10)
      const real lit = matmul(tanh(matmul(pair, transpose(con->W_a, 0, 1))), con->v_a).item();
      CHECK(e.at({0, t, j}) == doctest::Approx(lit).epsilon(1e-5));
    }
}

TEST_CASE("scorers: local-m weights are zero outside [p_t - D, p_t + D] and sum to 1 inside") {
  manual_seed(606);
  nn::LocalAttention attn(nn::LocalAttentionOptions(4, 6).mode("local-m").window(1));
  const Tensor q = randn({2, 6, 4}), h = randn({2, 9, 6});
  const nn::Attended a = attn->forward(q, h);  // p_t = t
  const Tensor pos = from_vector({3, 8, 0, 5}, {2, 2});
  const nn::Attended g = attn->forward(randn({2, 2, 4}), h, Tensor(), {}, pos);
  const Tensor one = attn->forward(randn({2, 4}), h, Tensor(), {}, from_vector({7, 2}, {2})).weights;
  for (int b = 0; b < 2; ++b)
    for (int j = 0; j < 9; ++j) {
      for (int t = 0; t < 6; ++t) CHECK((std::abs(j - t) <= 1 || a.weights.at({b, t, j}) == 0));
      for (int t = 0; t < 2; ++t)
        CHECK((std::abs(j - pos.at({b, t})) <= 1 || g.weights.at({b, t, j}) == 0));
      CHECK((std::abs(j - (b ? 2 : 7)) <= 1 || one.at({b, j}) == 0));
    }
  CHECK(sum(a.weights).item() == doctest::Approx(12).epsilon(1e-5));  // 2 x 6 rows, each sums to 1
  CHECK(a.weights.at({0, 0, 0}) > 0);
}

TEST_CASE("scorers: local-p weights are the Gaussian around p_t when the scores are equal") {
  manual_seed(607);
  nn::LocalAttention attn(nn::LocalAttentionOptions(4, 4).mode("local-p").window(4).score("dot"));
  {
    NoGradGuard ng;
    attn->W_p.mul_(4);  // spread the positions
  }
  const Tensor q = randn({2, 5, 4}), h = zeros({2, 12, 4}), v = randn({2, 12, 3});  // e_tj = 0
  const Tensor nine = from_vector({1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0}, {1, 12});
  const Tensor pad = cat({ones({1, 12}), nine}, 0);  // lengths 12 and 9
  const nn::AttentionMask mask = nn::AttentionMask().key_padding(pad);
  const nn::Attended a = attn->forward(q, h, v, mask);
  const Tensor p = attn->predict_position(q, mask, 12);  // (2, 5)
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 5; ++t) {
      const double pt = p.at({b, t});
      CHECK(pt > 0);
      CHECK(pt < (b ? 9 : 12));  // S per sequence
      int visible = 0, peak = 0, nearest = 0;
      for (int j = 0; j < (b ? 9 : 12); ++j) {
        visible += std::fabs(j - pt) <= 4;
        if (std::fabs(j - pt) < std::fabs(nearest - pt)) nearest = j;
      }
      for (int j = 0; j < 12; ++j) {
        const double w = a.weights.at({b, t, j});
        const bool in = std::fabs(j - pt) <= 4 && j < (b ? 9 : 12);
        const double expect = in ? std::exp(-(j - pt) * (j - pt) / (2 * 2.0 * 2.0)) / visible : 0;
        CHECK(w == doctest::Approx(expect).epsilon(1e-5));
        if (w > a.weights.at({b, t, peak})) peak = j;
      }
      CHECK(peak == nearest);  // the peak is the (real) key nearest p_t
    }
}

TEST_CASE("scorers: dropout on the weights in training, none in eval") {
  manual_seed(608);
  nn::LuongAttention attn(nn::LuongAttentionOptions(4, 4).score("dot").dropout(0.5));
  const Tensor q = randn({2, 3, 4}), h = randn({2, 50, 4});
  const Tensor w_train = attn->forward(q, h).weights;
  attn->eval();
  const Tensor w_eval = attn->forward(q, h).weights;
  int zeros = 0;
  for (int64_t i = 0; i < w_train.numel(); ++i) zeros += w_train.data()[i] == 0;
  CHECK(zeros > 50);
  CHECK(sum(w_eval).item() == doctest::Approx(6).epsilon(1e-5));
}

TEST_CASE("scorers: bad input is a heed::Error naming the module and the shapes") {
  nn::AdditiveAttention add(nn::AdditiveAttentionOptions(4, 6, 5));
  const std::string m1 = error_of([&] { add->forward(zeros({2, 3, 5}), zeros({2, 5, 6})); });
  CHECK_MESSAGE(m1.find("AdditiveAttention: query (2,3,5) must be (B, 4) or (B, Tq, 4)") == 0, m1);
  const std::string m2 = error_of([&] { add->forward(zeros({2, 4}), zeros({2, 5, 7})); });
  CHECK_MESSAGE(m2.find("AdditiveAttention: keys (2,5,7) must be (2, Tk, 6) for query (2,4)") == 0, m2);
  const std::string m3 = error_of([&] { add->forward(zeros({2, 4}), zeros({3, 5, 6})); });
  CHECK_MESSAGE(m3.find("AdditiveAttention: keys (3,5,6) must be (2, Tk, 6) for query (2,4)") == 0, m3);
  const std::string m3b = error_of([&] { add->forward_projected(zeros({2, 4}), zeros({2, 5, 6}), zeros({2, 5, 3})); });
  CHECK_MESSAGE(m3b.find("AdditiveAttention: projected keys (2,5,6) must be (2, Tk, 5)") == 0, m3b);
  CHECK_THROWS_AS(add->precompute_keys(zeros({2, 5})), Error);
  const std::string m4 = error_of([&] { add->forward(zeros({2, 4}), zeros({2, 5, 6}), zeros({2, 4, 3})); });
  CHECK_MESSAGE(m4.find("AdditiveAttention: values (2,4,3) must be (2, 5, Dv)") == 0, m4);
  const std::string m5 = error_of(
      [&] { add->forward(zeros({2, 4}), zeros({2, 5, 6}), Tensor(), nn::AttentionMask().key_padding(ones({2, 4}))); });
  CHECK_MESSAGE(m5.find("AdditiveAttention: key padding mask (2,4)") == 0, m5);

  const std::string m6 = error_of([] { nn::LuongAttention(nn::LuongAttentionOptions(4, 6).score("dot")); });
  CHECK_MESSAGE(m6.find("LuongAttention: the dot score s_t^T h_j needs query_dim == key_dim; got 4 and 6") == 0, m6);
  CHECK_THROWS_AS(nn::LuongAttention(nn::LuongAttentionOptions(4, 6).score("bilinear")), Error);
  CHECK_THROWS_AS(nn::LuongAttention(nn::LuongAttentionOptions(4, 6).score("concat").rank(2)), Error);
  nn::LuongAttention gen(nn::LuongAttentionOptions(4, 6));
  const std::string m7 = error_of([&] { gen->forward(zeros({2, 4}), zeros({2, 5, 4})); });
  CHECK_MESSAGE(m7.find("LuongAttention: keys (2,5,4) must be (2, Tk, 6) for query (2,4)") == 0, m7);
  nn::LuongCombine comb(nn::LuongCombineOptions(3, 4, 5));
  const std::string m8 = error_of([&] { comb->forward(zeros({2, 3}), zeros({3, 4})); });
  CHECK_MESSAGE(m8.find("LuongCombine: context (2,3) and query (3,4)") == 0, m8);

  nn::LocalAttention locm(nn::LocalAttentionOptions(4, 6).mode("local-m"));
  const std::string m9 = error_of([&] { locm->forward(zeros({2, 4}), zeros({2, 5, 6})); });
  CHECK_MESSAGE(m9.find("LocalAttention: local-m with a 2-D query (2,4)") == 0, m9);
  const std::string m10 = error_of([&] { locm->forward(zeros({2, 3, 4}), zeros({2, 5, 6}), Tensor(), {}, zeros({2})); });
  CHECK_MESSAGE(m10.find("LocalAttention: positions (2) must be (2,3)") == 0, m10);
  nn::LocalAttention locp(nn::LocalAttentionOptions(4, 6));
  CHECK_THROWS_AS(locp->forward(zeros({2, 3, 4}), zeros({2, 5, 6}), Tensor(), {}, zeros({2, 3})), Error);
  CHECK_THROWS_AS(nn::LocalAttention(nn::LocalAttentionOptions(4, 6).mode("local-x")), Error);
  CHECK_THROWS_AS(nn::LocalAttention(nn::LocalAttentionOptions(4, 6).window(0)), Error);
  CHECK_THROWS_AS(nn::AdditiveAttention(nn::AdditiveAttentionOptions(4, 6, 0)), Error);
}

TEST_CASE("scorers: AdditiveAttention equals the three-nn.Linear form under the header's mapping") {
  manual_seed(330);
  const int64_t Dq = 4, Dk = 6, A = 5;
  // PyTorch's usual form, every layer with a bias: energy(tanh(query_layer(s) + key_layer(h)))
  nn::Linear query_layer(nn::LinearOptions(Dq, A)), key_layer(nn::LinearOptions(Dk, A)),
      energy_layer(nn::LinearOptions(A, 1));
  nn::AdditiveAttention attn(nn::AdditiveAttentionOptions(Dq, Dk, A));
  {
    NoGradGuard ng;
    attn->W_s.copy_(query_layer->weight);
    attn->W_h.copy_(key_layer->weight);
    attn->b.copy_(query_layer->bias + key_layer->bias);
    attn->v.copy_(energy_layer->weight);  // (1, A) into (A); energy_layer.bias cancels in the softmax
  }
  const Tensor s = randn({2, 3, Dq}), h = randn({2, 5, Dk});
  const Tensor scores = energy_layer->forward(tanh(query_layer->forward(s).unsqueeze(2) +
                                                  key_layer->forward(h).unsqueeze(1)))
                            .squeeze(-1);  // (B, Tq, Tk)
  const nn::AttentionMask m = nn::AttentionMask().key_padding(padding());
  const nn::Attended a = attn->forward(s, h, h, m);
  CHECK(allclose(a.weights, nn::attend("by hand", scores, h, m).weights, 1e-5, 1e-6));
  CHECK(allclose(attn->score(s, attn->precompute_keys(h)) + energy_layer->bias, scores, 1e-5, 1e-6));
}

TEST_CASE("additive_score: the fused op equals its composed twin (float, fast tanh), any thread count") {
  manual_seed(511);
  using V = std::vector<Tensor>;
  for (const Shape& qs : {Shape{3, 1, 16}, Shape{2, 4, 7}}) {  // a decoder step; Tq = 4 != Tk = 5
    CAPTURE(qs);
    const Tensor qp = randn(qs), kp = randn({qs[0], 5, qs[2]}), v = randn({qs[2]});
    heed::test::check_fused_matches_composed(
        [](const V& x) { return additive_score(x[0], x[1], x[2]); },
        [](const V& x) { return additive_score_reference(x[0], x[1], x[2]); }, {qp, kp, v}, 1e-5, 1e-5);
  }
  // The backward adds the dv partials of each batch element in order: one thread and two
  // give the same bits.
  const Tensor qp = randn({8, 3, 32}).requires_grad_(), kp = randn({8, 6, 32}).requires_grad_();
  const Tensor v = randn({32}).requires_grad_(), de = randn({8, 3, 6});
  auto grads = [&](int threads) {
    set_num_threads(threads);
    for (Tensor t : {qp, kp, v}) t.set_grad(Tensor());
    additive_score(qp, kp, v).backward(de);
    return V{qp.grad().clone(), kp.grad().clone(), v.grad().clone()};
  };
  const int before = get_num_threads();
  const V one = grads(1), two = grads(2);
  set_num_threads(before);
  for (int i = 0; i < 3; ++i)
    CHECK(std::memcmp(one[i].data(), two[i].data(), one[i].numel() * sizeof(real)) == 0);
}

TEST_CASE("additive_score: bad shapes are a heed::Error naming the op and the shapes") {
  const std::string m = error_of([] { additive_score(zeros({2, 1, 5}), zeros({3, 4, 5}), zeros({5})); });
  CHECK_MESSAGE(m.find("additive_score: expected qp (B, Tq, A), kp (B, Tk, A) and v (A); got qp (2,1,5), kp (3,4,5) and v (5)") == 0, m);
  CHECK_THROWS_AS(additive_score(zeros({2, 1, 5}), zeros({2, 4, 6}), zeros({5})), Error);
  CHECK_THROWS_AS(additive_score(zeros({2, 1, 5}), zeros({2, 4, 5}), zeros({4})), Error);
  CHECK_THROWS_AS(additive_score(zeros({2, 5}), zeros({2, 4, 5}), zeros({5})), Error);
  CHECK_THROWS_AS(additive_score(Tensor(), zeros({2, 4, 5}), zeros({5})), Error);
}
