// gradcheck_double_backward.cpp - gradgradcheck (double build) of every op whose backward
// supports create_graph: the second derivative against finite differences of the first, in
// the inputs and in the incoming gradient (autograd/engine/gradcheck.h). Inputs stay away from
// kinks (relu, abs, clamp, max ties) and inside each op's domain, as in the gradchecks.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/pow.h>
#include <heed/autograd/ops/broadcast.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/linear.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/ops/views.h>
#include "helpers.h"

using namespace heed;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

void check_gradgrad(const TensorFn& f, const std::vector<Tensor>& inputs,
                    const GradcheckOptions& opt = GradcheckOptions()) {
  const GradcheckResult r = gradgradcheck(f, inputs, opt);
  CHECK_MESSAGE(r.ok, r.message);
}

// A leaf of N(0, scale^2) values with |x| >= gap (away from the kink at 0).
Tensor param_off_zero(const Shape& s, double scale = 1.0, double gap = 0.1) {
  Tensor t = randn(s);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = scale * t.data()[i];
    t.data()[i] = real(std::fabs(v) < gap ? (v >= 0 ? gap : -gap) : v);
  }
  return t.requires_grad_();
}

Tensor param_positive(const Shape& s) {
  Tensor t = rand(s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = real(0.3 + 2 * t.data()[i]);
  return t.requires_grad_();
}

}  // namespace

TEST_CASE("gradgradcheck arithmetic with broadcasting, and scalars") {
  manual_seed(351);
  Tensor a = param({2, 3}), b = param({3}), c = param({2, 1});
  Tensor pos = param_positive({3});
  check_gradgrad([](const V& v) { return v[0] * v[1]; }, {a, b});
  check_gradgrad([](const V& v) { return (v[0] + v[1]) * (v[0] - v[2]); }, {a, b, c});
  check_gradgrad([](const V& v) { return v[0] / v[1]; }, {a, pos});
  check_gradgrad([](const V& v) { return v[1] / (v[0] * v[0] + 1); }, {a, pos});
  check_gradgrad([](const V& v) { return -v[0] * v[0] * 2 + 3 - (1 - v[0]) / 4; }, {a});
  check_gradgrad([](const V& v) { return clone(v[0]) * v[0]; }, {a});
  check_gradgrad([](const V& v) { return expand(v[0], {4, 2, 1}) * sum_to(v[1], {1, 3}); }, {c, a});
}

TEST_CASE("gradgradcheck pow, scalar and tensor exponents") {
  manual_seed(352);
  Tensor x = param_positive({2, 3}), p = param({3}, 0.5);
  for (double e : {2.0, 3.0, 0.5, -0.5, -1.5, 1.0}) {
    CAPTURE(e);
    check_gradgrad([e](const V& v) { return pow(v[0], real(e)); }, {x});
  }
  check_gradgrad([](const V& v) { return pow(v[0], v[1]); }, {x, p});
}

TEST_CASE("gradgradcheck every unary op and activation") {
  manual_seed(353);
  Tensor x = param({3, 4}), pos = param_positive({3, 4}), off = param_off_zero({3, 4}, 1.5);
  check_gradgrad([](const V& v) { return exp(v[0]); }, {x});
  check_gradgrad([](const V& v) { return tanh(v[0]); }, {x});
  check_gradgrad([](const V& v) { return sigmoid(v[0]); }, {x});
  check_gradgrad([](const V& v) { return log(v[0]); }, {pos});
  check_gradgrad([](const V& v) { return log1p(v[0]); }, {pos});
  check_gradgrad([](const V& v) { return sqrt(v[0]); }, {pos});
  check_gradgrad([](const V& v) { return gelu(v[0]); }, {x});
  check_gradgrad([](const V& v) { return gelu(v[0], "tanh"); }, {x});
  for (double alpha : {1.0, 0.5})
    check_gradgrad([alpha](const V& v) { return elu(v[0], real(alpha)); }, {off});
  // softplus: f'' = beta s (1 - s) below the threshold, 0 above it (y = x; threshold -10)
  check_gradgrad([](const V& v) { return softplus(v[0]); }, {x});
  check_gradgrad([](const V& v) { return softplus(v[0], 2) * v[0]; }, {x});
  check_gradgrad([](const V& v) { return softplus(v[0], 1, -10) * v[0]; }, {x});
  check_gradgrad([](const V& v) { return mish(v[0]); }, {x});
  check_gradgrad([](const V& v) { return mish(v[0] * 3) * v[0]; }, {x});
  // piecewise linear: second derivative 0 in x, but the first is linear in dy
  check_gradgrad([](const V& v) { return relu(v[0]); }, {off});
  check_gradgrad([](const V& v) { return leaky_relu(v[0], 0.2) * v[0]; }, {off});
  check_gradgrad([](const V& v) { return abs(v[0]); }, {off});
  check_gradgrad([](const V& v) { return clamp(v[0], -0.5, 0.7) * v[0]; }, {off});
  check_gradgrad([](const V& v) { return relu(v[0]) * tanh(v[0]); }, {off});
}

TEST_CASE("gradgradcheck matmul (2-D, batched, broadcast, vectors) and linear") {
  manual_seed(354);
  Tensor a = param({3, 4}), b = param({4, 2}), ba = param({2, 3, 4}), bb = param({2, 4, 2});
  Tensor v4 = param({4});
  check_gradgrad([](const V& v) { return tanh(matmul(v[0], v[1])); }, {a, b});
  check_gradgrad([](const V& v) { return tanh(matmul(v[0], v[1])); }, {ba, bb});
  check_gradgrad([](const V& v) { return tanh(matmul(v[0], v[1])); }, {ba, b});
  check_gradgrad([](const V& v) { return tanh(matmul(v[0], v[1])); }, {a, bb});
  check_gradgrad([](const V& v) { return tanh(matmul(v[0], v[1])); }, {a, v4});
  Tensor x = param({2, 3, 4}), w = param({5, 4}), bias = param({5});
  check_gradgrad([](const V& v) { return tanh(linear(v[0], v[1], v[2])); }, {x, w, bias});
  check_gradgrad([](const V& v) { return linear(v[0], v[1]) * linear(v[0], v[1]); }, {x, w});
}

TEST_CASE("gradgradcheck reductions: sum, mean, max/min, var") {
  manual_seed(355);
  Tensor x = param({3, 4, 2});
  check_gradgrad([](const V& v) { return sum(v[0] * v[0]); }, {x});
  check_gradgrad([](const V& v) { return sum(tanh(v[0]), 1); }, {x});
  check_gradgrad([](const V& v) { return mean(v[0] * v[0], 2, true); }, {x});
  check_gradgrad([](const V& v) { return mean(exp(v[0])); }, {x});
  check_gradgrad([](const V& v) { return max(v[0] * v[0]); }, {x});
  check_gradgrad([](const V& v) { return min(tanh(v[0])); }, {x});
  check_gradgrad([](const V& v) { return max(v[0] * v[0], 1).values; }, {x});
  check_gradgrad([](const V& v) { return min(v[0] * v[0], 0, true).values; }, {x});
  check_gradgrad([](const V& v) { return var(v[0]); }, {x});
  check_gradgrad([](const V& v) { return var(v[0], 1, false); }, {x});
}

TEST_CASE("gradgradcheck views and shape ops") {
  manual_seed(356);
  Tensor x = param({2, 3, 4}), y = param({2, 1, 4});
  auto sq = [](const Tensor& t) { return t * t; };
  check_gradgrad([&](const V& v) { return sq(v[0].reshape({6, 4})); }, {x});
  check_gradgrad([&](const V& v) { return sq(v[0].flatten(1).unsqueeze(0).squeeze(0)); }, {x});
  check_gradgrad([&](const V& v) { return sq(v[0].transpose(0, 2)); }, {x});
  check_gradgrad([&](const V& v) { return sq(v[0].permute({2, 0, 1})); }, {x});
  check_gradgrad([&](const V& v) { return sq(slice(v[0], 2, 1, 4, 2)); }, {x});
  check_gradgrad([&](const V& v) { return sq(narrow(v[0], 1, 1, 2)); }, {x});
  check_gradgrad([&](const V& v) { return sq(select(v[0], 1, -1)); }, {x});
  check_gradgrad([&](const V& v) { return sq(cat({v[0], v[1]}, 1)); }, {x, y});
  check_gradgrad([&](const V& v) { return sq(stack({v[0], v[0] * 2}, 1)); }, {x});
}
