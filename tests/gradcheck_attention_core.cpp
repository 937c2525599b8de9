// gradcheck_attention_core.cpp - finite-difference checks (double build) of the shared
// attention core, attend() (mask -> softmax -> dropout -> alpha V), and of scaled
// dot-product attention on top of it. Each check differentiates the context and the
// weights together (both flattened into one output), w.r.t. scores/q/k and values.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attend.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/attention/scaled_dot_product.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/attention/scaled_dot_product.h>
#include "helpers.h"

using namespace heed;
using heed::test::right_padding;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

// The context and the weights as one flat tensor, so one gradcheck covers both.
Tensor both(const nn::Attended& a) { return cat({flatten(a.context), flatten(a.weights)}); }

// attend() on scores (B, Tq, Tk) and values (B, Tk, 3) under mask m.
void check_attend(int64_t B, int64_t Tq, int64_t Tk, const nn::AttentionMask& m) {
  Tensor e = param({B, Tq, Tk}), v = param({B, Tk, 3});
  check_grad([m](const V& x) { return both(nn::attend("test", x[0], x[1], m)); }, {e, v});
}

}  // namespace

TEST_CASE("gradcheck attend: no mask, key padding, full mask, key padding + full mask") {
  manual_seed(401);
  check_attend(2, 3, 4, {});
  check_attend(2, 3, 4, nn::AttentionMask().key_padding(right_padding({4, 2}, 4)));
  const Tensor full = from_vector({1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1}, {3, 4});  // (Tq, Tk)
  check_attend(2, 3, 4, nn::AttentionMask().mask(full));
  check_attend(2, 3, 4, nn::AttentionMask().mask(full).key_padding(right_padding({3, 4}, 4)));
}

TEST_CASE("gradcheck attend: causal with Tq == Tk, Tq < Tk and Tq > Tk (first queries see nothing)") {
  manual_seed(402);
  check_attend(2, 4, 4, nn::AttentionMask().causal());
  check_attend(2, 2, 5, nn::AttentionMask().causal());
  check_attend(2, 5, 3, nn::AttentionMask().causal());  // queries 0 and 1 see no key
  check_attend(2, 5, 3, nn::AttentionMask().causal().key_padding(right_padding({3, 2}, 3)));
}

TEST_CASE("gradcheck attend: fully masked rows have zero context and exactly zero gradient") {
  manual_seed(403);
  const nn::AttentionMask m = nn::AttentionMask().key_padding(right_padding({3, 0}, 3));  // batch 1: none
  check_attend(2, 2, 3, m);

  Tensor e = param({2, 2, 3}), v = param({2, 3, 4});
  const nn::Attended a = nn::attend("test", e, v, m);
  sum(a.context * randn(a.context.shape())).backward();
  for (int64_t i = 0; i < 2 * 4; ++i) CHECK(a.context.data()[2 * 4 + i] == 0);  // batch 1
  for (int64_t i = 0; i < 2 * 3; ++i) {
    CHECK(a.weights.data()[2 * 3 + i] == 0);
    CHECK(e.grad().data()[2 * 3 + i] == 0);
  }
  for (int64_t i = 0; i < 3 * 4; ++i) CHECK(v.grad().data()[3 * 4 + i] == 0);
  for (const Tensor& t : {a.context, a.weights, e.grad(), v.grad()})
    for (real x : t.to_vector()) CHECK(std::isfinite(x));
}

TEST_CASE("gradcheck attend: 4-D (B, H, Tq, Tk) scores with a (B, 1, Tq, Tk) mask and padding") {
  manual_seed(404);
  Tensor e = param({2, 2, 3, 4}), v = param({2, 2, 4, 2});
  Tensor full = ones({2, 1, 3, 4});
  full.data()[5] = 0;
  full.data()[12 + 0] = 0;
  const nn::AttentionMask m = nn::AttentionMask().mask(full).key_padding(right_padding({4, 3}, 4));
  check_grad([m](const V& x) { return both(nn::attend("test", x[0], x[1], m)); }, {e, v});
}

TEST_CASE("gradcheck attend: dropout on the weights, the seed set inside the function") {
  manual_seed(405);
  Tensor e = param({2, 3, 5}), v = param({2, 5, 3});
  const nn::AttentionMask m = nn::AttentionMask().key_padding(right_padding({5, 4}, 5));
  const auto f = [m](const V& x) {
    manual_seed(77);  // every evaluation drops the same weights
    return both(nn::attend("test", x[0], x[1], m, 0.3, /*training=*/true));
  };
  check_grad(f, {e, v});
  const nn::Attended a = [&] {
    manual_seed(77);
    return nn::attend("test", e, v, m, 0.3, true);
  }();
  int dropped = 0;  // visible weights that dropout zeroed
  for (int64_t i = 0; i < a.weights.numel(); ++i) dropped += a.weights.data()[i] == 0;
  CHECK(dropped > 3);  // 3 weights are masked (batch 1, key 4), the rest dropped
}

TEST_CASE("gradcheck scaled_dot_product_attention: 3-D and 4-D, masks, causal, scale override") {
  manual_seed(406);
  Tensor q = param({2, 3, 4}), k = param({2, 5, 4}), v = param({2, 5, 3});
  check_grad([](const V& x) { return both(nn::scaled_dot_product_attention(x[0], x[1], x[2])); },
             {q, k, v});
  const nn::AttentionMask m = nn::AttentionMask().key_padding(right_padding({5, 3}, 5)).causal();
  check_grad([m](const V& x) { return both(nn::scaled_dot_product_attention(x[0], x[1], x[2], m)); },
             {q, k, v});
  check_grad([m](const V& x) {
    return both(nn::scaled_dot_product_attention(x[0], x[1], x[2], m, {}, 0, false, 0.7));
  }, {q, k, v});

  Tensor qh = param({2, 2, 4, 3}), kh = param({2, 2, 3, 3}), vh = param({2, 2, 3, 2});
  const nn::AttentionMask c = nn::AttentionMask().causal();  // Tq 4 > Tk 3: query 0 sees nothing
  check_grad([c](const V& x) { return both(nn::scaled_dot_product_attention(x[0], x[1], x[2], c)); },
             {qh, kh, vh});
  check_grad([](const V& x) {
    manual_seed(78);
    return both(nn::scaled_dot_product_attention(x[0], x[1], x[2], {}, {}, 0.25, true, 0.5));
  }, {qh, kh, vh});
}

TEST_CASE("gradcheck ScaledDotProductAttention module: causal option, dropout only in training") {
  manual_seed(407);
  Tensor q = param({1, 3, 2}), k = param({1, 3, 2}), v = param({1, 3, 2});
  auto sdpa = nn::ScaledDotProductAttention(
      nn::ScaledDotProductAttentionOptions().causal(true).dropout(0.2).scale(0.9));
  check_grad([sdpa](const V& x) {
    manual_seed(79);
    return both(sdpa->forward(x[0], x[1], x[2]));
  }, {q, k, v});
  sdpa->eval();
  check_grad([sdpa](const V& x) { return both(sdpa->forward(x[0], x[1], x[2])); }, {q, k, v});
}

TEST_CASE("gradcheck scaled_dot_product_attention with attn_bias: w.r.t. q, k, v and the bias") {
  manual_seed(408);
  // (B, H, Tq, D) with a per-head bias (H, Tq, Tk) broadcast over the batch, causal Tq < Tk
  Tensor q = param({2, 2, 3, 3}), k = param({2, 2, 4, 3}), v = param({2, 2, 4, 2});
  Tensor bias = param({2, 3, 4});
  const nn::AttentionMask m = nn::AttentionMask().key_padding(right_padding({4, 3}, 4)).causal();
  check_grad([m](const V& x) {
    return both(nn::scaled_dot_product_attention(x[0], x[1], x[2], m, x[3]));
  }, {q, k, v, bias});
  // (B, Tq, D) with a full (B, Tq, Tk) bias and a scale override
  Tensor q3 = param({2, 3, 4}), k3 = param({2, 5, 4}), v3 = param({2, 5, 3}), b3 = param({2, 3, 5});
  check_grad([](const V& x) {
    return both(nn::scaled_dot_product_attention(x[0], x[1], x[2], {}, x[3], 0, false, 0.6));
  }, {q3, k3, v3, b3});
}
