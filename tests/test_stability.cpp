// test_stability.cpp - inputs on which a naive formula gives NaN or Inf, and heed must not.
//   softmax(x) = exp(x - max x) / sum exp(x - max x)       naive exp(x) overflows at 1e4
//   cross_entropy = logsumexp(z) - z_y                     naive log(softmax) gives log(0)
//   layer_norm of a constant row: var = 0, (x - mean) / sqrt(0 + eps) = 0, not 0/0
//   attention with every key masked: softmax of all -inf is 0 here (not NaN)
#include <cmath>
#include <limits>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attend.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/layer_norm.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/attention/scaled_dot_product.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/loss.h>
#include <heed/layers/attention/multihead_attention.h>
#include "helpers.h"

using namespace heed;

namespace {

bool all_finite(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(t.data()[i])) return false;
  return true;
}

}  // namespace

TEST_CASE("stability: softmax and log_softmax of 1e4-scale logits, forward and backward") {
  Tensor x = from_vector({1e4, 0, -1e4, 1e4 - 1}, {1, 4}).requires_grad_();
  Tensor p = softmax(x, -1);
  REQUIRE(all_finite(p));
  CHECK(p.at({0, 0}) == doctest::Approx(1 / (1 + std::exp(-1.0))));
  CHECK(p.at({0, 2}) == 0);
  Tensor lp = log_softmax(x, -1);
  REQUIRE(all_finite(lp));
  CHECK(lp.at({0, 2}) == doctest::Approx(-2e4 - std::log1p(std::exp(-1.0))).epsilon(1e-6));
  sum(lp * from_vector({1, 2, 3, 4}, {1, 4})).backward();
  CHECK(all_finite(x.grad()));
}

TEST_CASE("stability: cross-entropy with extreme logits is finite, with a finite gradient") {
  Tensor z = from_vector({1e4, -1e4, 0, -3e4, 3e4, 0}, {2, 3}).requires_grad_();
  Tensor loss = nn::functional::cross_entropy(z, IndexTensor({1, 1}));
  REQUIRE(std::isfinite(loss.item()));
  // row 0: logsumexp = 1e4, z_y = -1e4 -> 2e4;  row 1: logsumexp = 3e4, z_y = 3e4 -> 0
  CHECK(loss.item() == doctest::Approx(1e4));
  loss.backward();
  REQUIRE(all_finite(z.grad()));
  CHECK(z.grad().at({0, 0}) == doctest::Approx(0.5));   // (softmax - onehot) / N
  CHECK(z.grad().at({0, 1}) == doctest::Approx(-0.5));
  CHECK(z.grad().at({1, 1}) == doctest::Approx(0).epsilon(1e-6));
}

TEST_CASE("stability: layer norm of constant rows gives the bias and finite gradients") {
  Tensor x = full({3, 8}, 7.5).requires_grad_();
  Tensor w = ones({8}).requires_grad_();
  Tensor b = full({8}, 0.25).requires_grad_();
  Tensor y = layer_norm(x, {8}, w, b);
  REQUIRE(all_finite(y));
  CHECK(y.at({2, 5}) == doctest::Approx(0.25));
  sum(y * randn({3, 8})).backward();
  CHECK(all_finite(x.grad()));
  CHECK(all_finite(w.grad()));
}

TEST_CASE("stability: attention with every key masked gives zero context and zero gradients") {
  manual_seed(3);
  Tensor q = randn({2, 2, 3, 4}).requires_grad_();
  Tensor k = randn({2, 2, 5, 4}).requires_grad_();
  Tensor v = randn({2, 2, 5, 4}).requires_grad_();
  Tensor pad = zeros({2, 5});  // no real key at all
  nn::Attended a = nn::scaled_dot_product_attention(q, k, v, nn::AttentionMask().key_padding(pad));
  REQUIRE(all_finite(a.context));
  CHECK(sum(abs(a.context)).item() == 0);
  sum(a.context).backward();
  CHECK(all_finite(q.grad()));
  CHECK(sum(abs(v.grad())).item() == 0);

  // The flash path (multi-head attention without weights) does the same.
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  Tensor x = randn({2, 5, 8}).requires_grad_();
  Tensor out = mha->forward(x, x, x, nn::AttentionMask().key_padding(pad), {}, false).output;
  REQUIRE(all_finite(out));
  sum(out).backward();
  CHECK(all_finite(x.grad()));
}

TEST_CASE("stability: exp, log, sigmoid and tanh at their limits") {
  const real inf = std::numeric_limits<real>::infinity();
  Tensor big = from_vector({-1e4, -200, -88, 0, 88, 200, 1e4}, {7});
  Tensor e = exp(big);
  CHECK(e.at({0}) == 0);
  CHECK(e.at({1}) == 0);
  CHECK(e.at({3}) == 1);
  CHECK(std::isfinite(e.at({4})));
  CHECK(e.at({5}) == inf);  // overflow is +inf, as std::exp, never NaN or garbage
  CHECK(e.at({6}) == inf);
  Tensor l = log(from_vector({0, std::numeric_limits<real>::min(), 1, inf}, {4}));
  CHECK(l.at({0}) == -inf);
  CHECK(std::isfinite(l.at({1})));
  CHECK(l.at({2}) == 0);
  CHECK(l.at({3}) == inf);
  Tensor x = big.detach().requires_grad_();
  Tensor s = sigmoid(x), t = tanh(x);
  CHECK(s.at({0}) == 0);
  CHECK(s.at({6}) == 1);
  CHECK(t.at({0}) == -1);
  CHECK(t.at({6}) == 1);
  sum(s + t).backward();
  REQUIRE(all_finite(x.grad()));
  CHECK(x.grad().at({6}) == 0);
}

TEST_CASE("stability: softplus at +-1e4 is finite where log1p(exp(x)) composed overflows") {
  Tensor x = from_vector({-1e4, -80, -20, 0, 20, 21, 88, 100, 1e4}, {9}).requires_grad_();
  CHECK(log1p(exp(x.detach())).at({7}) == std::numeric_limits<real>::infinity());  // the trap
  Tensor y = softplus(x);
  REQUIRE(all_finite(y));
  CHECK(y.at({0}) == 0);
  CHECK(y.at({3}) == doctest::Approx(std::log(2.0)));
  CHECK(y.at({5}) == 21);     // past the threshold, x itself
  CHECK(y.at({8}) == real(1e4));
  CHECK(std::fabs(y.at({1}) / std::exp(-80.0) - 1) < 1e-5);  // e^-80 to 5 digits, not 0
  sum(y).backward();
  REQUIRE(all_finite(x.grad()));
  CHECK(x.grad().at({0}) == 0);
  CHECK(x.grad().at({8}) == 1);
}
