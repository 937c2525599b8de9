// test_positional_relative.cpp - the defining properties of the encodings that act on the
// scores (float build):
//   relative (Shaw)  distances clipped to [-k, k]; the bucketed terms equal the paper's
//                    (Tq, Tk, d) form; attention is invariant under shifting all positions
//   ALiBi            slopes 1/2 .. 1/256 for 8 heads (reference rule otherwise); the bias is
//                    zero on the diagonal and linear in the distance
#include <algorithm>
#include <cmath>

#include <heed/core/random.h>
#include <heed/autograd/ops/attention/alibi.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attend.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/attention/relative_position_terms.h>
#include <heed/autograd/ops/attention/relative_position.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/attention/absolute_position.h>
#include <heed/layers/attention/multihead_attention.h>
#include <heed/layers/attention/positional.h>
#include <heed/layers/attention/relative_position.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;

// ---------------------------------------------------------------- relative

TEST_CASE("positional relative: distances are clip(j - i, -k, k); Tq != Tk aligns the last query") {
  const IndexTensor a = nn::relative_distance_index(5, 5, 2);  // ids = distance + k
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 5; ++j) CHECK(a[i * 5 + j] == std::clamp<int64_t>(j - i, -2, 2) + 2);
  const IndexTensor b = nn::relative_distance_index(2, 5, 3);  // query 0 at position 3, 1 at 4
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 5; ++j) CHECK(b[i * 5 + j] == std::clamp<int64_t>(j - (i + 3), -3, 3) + 3);

  CHECK(relative_buckets(5, 5, 2).count() == 5);    // 2k + 1
  CHECK(relative_buckets(5, 5, 100).count() == 9);  // only the Tq + Tk - 1 distances that occur
  CHECK(relative_buckets(1, 6, 100).count() == 6);  // one query at the end: distances -5 .. 0
  CHECK_THROWS_AS(relative_buckets(0, 3, 1), Error);
  CHECK_THROWS_AS(relative_buckets(3, 3, -1), Error);
}

TEST_CASE("positional relative: bucketed key and value terms equal the paper's (Tq, Tk, d) form") {
  manual_seed(21);
  for (Shape s : {Shape{5, 5, 0}, Shape{5, 5, 1}, Shape{5, 5, 2}, Shape{5, 5, 10}, Shape{3, 7, 2},
                  Shape{6, 2, 3}}) {
    CAPTURE(s);
    const int64_t Tq = s[0], Tk = s[1], k = s[2], d = 4;
    Tensor q1 = randn({2, 3, Tq, d}).requires_grad_(), q2 = q1.detach().requires_grad_();
    Tensor wk1 = randn({2 * k + 1, d}).requires_grad_(), wk2 = wk1.detach().requires_grad_();
    Tensor a1 = rand({2, 3, Tq, Tk}).requires_grad_(), a2 = a1.detach().requires_grad_();
    Tensor wv1 = randn({2 * k + 1, d}).requires_grad_(), wv2 = wv1.detach().requires_grad_();
    const Tensor e1 = nn::relative_key_bias(q1, wk1, Tk, 0.5);
    const Tensor e2 = nn::relative_key_bias_reference(q2, wk2, Tk, 0.5);
    const Tensor c1 = nn::relative_value_context(a1, wv1);
    const Tensor c2 = nn::relative_value_context_reference(a2, wv2);
    CHECK(allclose(e1, e2, 1e-5, 1e-6));
    CHECK(allclose(c1, c2, 1e-5, 1e-6));
    const Tensor de = randn(e1.shape()), dc = randn(c1.shape());
    (sum(e1 * de) + sum(c1 * dc)).backward();
    (sum(e2 * de) + sum(c2 * dc)).backward();
    CHECK(allclose(q1.grad(), q2.grad(), 1e-5, 1e-5));
    CHECK(allclose(wk1.grad(), wk2.grad(), 1e-5, 1e-5));
    CHECK(allclose(a1.grad(), a2.grad(), 1e-5, 1e-5));
    CHECK(allclose(wv1.grad(), wv2.grad(), 1e-5, 1e-5));
  }
  CHECK_THROWS_AS(nn::relative_key_bias(randn({2, 3, 4}), randn({4, 4}), 3, 1), Error);  // 2k+1 even
  CHECK_THROWS_AS(nn::relative_key_bias(randn({2, 3, 4}), randn({5, 3}), 3, 1), Error);  // d differs
}

TEST_CASE("positional relative: the key term is Toeplitz: unchanged when i and j shift together") {
  manual_seed(22);
  const int64_t T = 9, d = 4;
  const Tensor q = randn({1, d}) * ones({T, d});  // the same q at every position
  const Tensor bias = nn::relative_key_bias(q, randn({7, d}), T, 1);  // k = 3, (T, T)
  for (int64_t i = 0; i + 1 < T; ++i)
    for (int64_t j = 0; j + 1 < T; ++j) CHECK(bias.at({i + 1, j + 1}) == bias.at({i, j}));
}

// Attention over [3 extra tokens; x] where x's queries cannot see the extras: x's tokens
// now sit at positions 3 .. 3 + T - 1. With relative positions nothing changes; with
// absolute (sinusoidal) positions added to the input, the outputs do.
TEST_CASE("positional relative: RelativeSelfAttention is invariant under shifting all positions") {
  manual_seed(23);
  const int64_t T = 5, S = 3, E = 8;
  nn::RelativeSelfAttention attn(nn::RelativeSelfAttentionOptions(E, 2, 2));
  const Tensor x = randn({2, T, E}), extra = randn({2, S, E});
  Tensor see = ones({S + T, S + T});  // queries of x see only x's keys
  for (int64_t i = S; i < S + T; ++i)
    for (int64_t j = 0; j < S; ++j) see.data()[i * (S + T) + j] = 0;
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    const Tensor alone = attn->forward(x, nn::AttentionMask().causal(causal)).output;
    const nn::AttentionMask m = nn::AttentionMask().mask(see).causal(causal);
    const Tensor shifted = attn->forward(cat({extra, x}, 1), m).output;
    CHECK(allclose(narrow(shifted, 1, S, T), alone, 1e-5, 1e-5));
  }
  nn::SinusoidalPositionalEncoding pe(E, 50);  // the negative control
  const Tensor alone = attn->forward(pe->forward(x)).output;
  const Tensor shifted = attn->forward(pe->forward(cat({extra, x}, 1)), nn::AttentionMask().mask(see)).output;
  CHECK_FALSE(allclose(narrow(shifted, 1, S, T), alone, 1e-3, 1e-3));
}

TEST_CASE("positional relative: RelativeSelfAttention shapes, weights, masked rows, errors, names") {
  manual_seed(24);
  nn::RelativeSelfAttention attn(nn::RelativeSelfAttentionOptions(6, 3, 4));
  const Tensor x = randn({2, 5, 6});
  const nn::AttentionOutput avg = attn->forward(x);
  CHECK(avg.output.shape() == Shape{2, 5, 6});
  CHECK(avg.weights.shape() == Shape{2, 5, 5});
  CHECK(allclose(sum(avg.weights, -1), ones({2, 5})));
  const nn::AttentionOutput per = attn->forward(x, nn::AttentionMask().causal(), false);
  CHECK(per.weights.shape() == Shape{2, 3, 5, 5});
  CHECK(per.weights.at({1, 2, 1, 3}) == 0);  // causal: key 3 is after query 1

  // every key of batch 1 masked: zero context, so the output is out_proj's bias, no NaN
  const Tensor pad = from_vector({1, 1, 1, 0, 0, 0, 0, 0, 0, 0}, {2, 5});
  Tensor xg = x.detach().requires_grad_();
  const nn::AttentionOutput r = attn->forward(xg, nn::AttentionMask().key_padding(pad));
  for (int64_t t = 0; t < 5; ++t)
    for (int64_t c = 0; c < 6; ++c) CHECK(r.output.at({1, t, c}) == attn->out_proj->bias.at({c}));
  sum(r.output * r.output).backward();
  for (int64_t i = 0; i < xg.grad().numel(); ++i) CHECK(std::isfinite(xg.grad().data()[i]));

  std::vector<std::string> names;
  for (auto& [n, p] : attn->named_parameters()) names.push_back(n);
  CHECK(names == std::vector<std::string>{"q_proj.weight", "q_proj.bias", "k_proj.weight",
                                          "k_proj.bias", "v_proj.weight", "v_proj.bias",
                                          "out_proj.weight", "out_proj.bias",
                                          "relative.key_table", "relative.value_table"});
  CHECK(attn->relative->key_table.shape() == Shape{9, 2});
  CHECK(attn->repr() == "RelativeSelfAttention(embed_dim=6, num_heads=3, max_relative_position=4, "
                       "dropout=0.0, bias=True)");
  CHECK_THROWS_AS(nn::RelativeSelfAttention(nn::RelativeSelfAttentionOptions(6, 4, 2)), Error);
  CHECK_THROWS_AS(attn->forward(randn({2, 5, 7})), Error);
}

// ---------------------------------------------------------------- ALiBi

TEST_CASE("positional alibi: 8 heads get slopes 1/2 .. 1/256; other counts follow the reference") {
  const Tensor m8 = nn::alibi_slopes(8);
  for (int h = 0; h < 8; ++h) CHECK(m8.at({h}) == real(std::ldexp(1.0, -(h + 1))));
  // get_slopes(n) = power-of-2 slopes for c = 2^floor(log2 n), then every other of 2c's
  auto expect = [](int64_t n, std::vector<double> log2s) {
    const Tensor m = nn::alibi_slopes(n);
    REQUIRE(m.numel() == int64_t(log2s.size()));
    for (int64_t h = 0; h < n; ++h)
      CHECK(m.at({h}) == doctest::Approx(std::exp2(log2s[h])).epsilon(1e-6));
  };
  expect(1, {-8});
  expect(2, {-4, -8});
  expect(3, {-4, -8, -2});
  expect(6, {-2, -4, -6, -8, -1, -3});
  expect(12, {-1, -2, -3, -4, -5, -6, -7, -8, -0.5, -1.5, -2.5, -3.5});
  CHECK_THROWS_AS(nn::alibi_slopes(0), Error);
}

TEST_CASE("positional alibi: bias is zero on the diagonal and linear in the distance") {
  const int64_t H = 4, T = 6;
  const Tensor m = nn::alibi_slopes(H);
  const Tensor b = nn::alibi_bias(H, T, T);
  const Tensor s = nn::alibi_bias(H, T, T, true);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < T; ++i) {
      CHECK(b.at({h, i, i}) == 0);
      for (int64_t j = 0; j < T; ++j) {
        CHECK(b.at({h, i, j}) == doctest::Approx(-m.at({h}) * double(i - j)));
        CHECK(s.at({h, i, j}) == doctest::Approx(-m.at({h}) * std::fabs(double(i - j))));
        CHECK(s.at({h, i, j}) == s.at({h, j, i}));
        if (j + 1 < T) CHECK(b.at({h, i, j + 1}) - b.at({h, i, j}) == doctest::Approx(m.at({h})));
      }
    }
  const Tensor c = nn::alibi_bias(2, 2, 5);  // Tq != Tk: the last query is at the last key
  CHECK(c.at({0, 1, 4}) == 0);
  CHECK(c.at({0, 0, 3}) == 0);
  CHECK(c.at({1, 0, 0}) == doctest::Approx(-3 * nn::alibi_slopes(2).at({1})));
  CHECK_THROWS_AS(nn::alibi_bias(0, 2, 2), Error);
}

TEST_CASE("positional alibi: with a causal mask, weights decay geometrically with distance") {
  // equal scores + bias: alpha_ij proportional to exp(-m (i - j)) over j <= i
  const Tensor e = zeros({1, 2, 4, 4}) + nn::alibi_bias(2, 4, 4);
  const nn::Attended a = nn::attend("alibi", e, randn({1, 2, 4, 3}), nn::AttentionMask().causal());
  const Tensor m = nn::alibi_slopes(2);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t j = 0; j + 1 <= 3; ++j)
      CHECK(a.weights.at({0, h, 3, j}) / a.weights.at({0, h, 3, j + 1}) ==
            doctest::Approx(std::exp(-m.at({h}))).epsilon(1e-5));
  CHECK(a.weights.at({0, 0, 1, 2}) == 0);
}
