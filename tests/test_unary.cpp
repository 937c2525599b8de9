// test_unary.cpp - forward values of autograd/ops/unary.h against std:: and hand-computed
// references, the derivatives PyTorch fixes at kinks, saturation, NaN, and errors.
#include <cmath>
#include <limits>

#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/engine/node.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;

namespace {

const real kInf = std::numeric_limits<real>::infinity();

// Backpropagate ones through f(x) and return dL/dx, L = sum(f(x)).
std::vector<real> grad_of(Tensor (*f)(const Tensor&), const std::vector<real>& xs) {
  Tensor x = from_vector(xs, {static_cast<int64_t>(xs.size())}).requires_grad_();
  sum(f(x)).backward();
  return x.grad().to_vector();
}

// |got - want| in units of float's spacing at want. exp, log, tanh... are fastmath:: kernels
// (core/fastmath.h), within a few such units of the exact value as libm is, but not
// bit-identical to libm; tests/test_fastmath.cpp holds their error bounds.
double ulps(real got, double want) {
  const float w = std::fabs(float(want));
  return std::fabs(double(got) - want) / (double(std::nextafter(w, kInf)) - double(w));
}

// Every element of `got` within `tol` (relative, floored at 1) of `want`.
void check_values(const Tensor& got, const std::vector<double>& want, double tol = 1e-6) {
  REQUIRE(got.numel() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(double(got.data()[i]) == doctest::Approx(want[i]).epsilon(tol).scale(1));
  }
}

}  // namespace

TEST_CASE("unary: exp log sqrt tanh agree with std::") {
  const std::vector<real> xs = {0.01f, 0.5f, 1, 2.5f, 7, 30};
  Tensor x = from_vector(xs, {2, 3});
  Tensor e = exp(x), l = log(x), s = sqrt(x), t = tanh(x - 3);
  CHECK(e.shape() == Shape{2, 3});
  for (size_t i = 0; i < xs.size(); ++i) {
    CAPTURE(xs[i]);
    CHECK(ulps(e.data()[i], std::exp(double(xs[i]))) <= 1);
    CHECK(ulps(l.data()[i], std::log(double(xs[i]))) <= 1);
    CHECK(s.data()[i] == std::sqrt(xs[i]));
    CHECK(ulps(t.data()[i], std::tanh(double(xs[i] - 3))) <= 2);
  }
  // domain edges follow IEEE, as PyTorch: log 0 = -inf, log of a negative and sqrt of a negative are NaN
  CHECK(log(zeros({1})).item() == -kInf);
  CHECK(std::isnan(log(full({1}, -1)).item()));
  CHECK(std::isnan(sqrt(full({1}, -1)).item()));
  CHECK(exp(scalar_tensor(0)).item() == 1);
  CHECK(exp(scalar_tensor(0)).shape() == Shape{});
}

TEST_CASE("unary: gradients of exp log sqrt tanh at hand-computed points") {
  auto g = grad_of(exp, {0, 1});
  CHECK(g[0] == doctest::Approx(1));
  CHECK(g[1] == doctest::Approx(std::exp(1.0)));
  g = grad_of(log, {0.5f, 4});
  CHECK(g[0] == doctest::Approx(2));
  CHECK(g[1] == doctest::Approx(0.25));
  g = grad_of(sqrt, {4, 0.25f});
  CHECK(g[0] == doctest::Approx(0.25));
  CHECK(g[1] == doctest::Approx(1));
  g = grad_of(tanh, {0, 1});
  CHECK(g[0] == doctest::Approx(1));
  CHECK(g[1] == doctest::Approx(1 - std::tanh(1.0) * std::tanh(1.0)));
}

TEST_CASE("unary: sigmoid is exact at 0 and finite far into saturation") {
  Tensor x = from_vector({-1000, -100, -80, 0, 2, 20, 100, 1000}, {8}).requires_grad_();
  Tensor y = sigmoid(x);
  for (real v : y.to_vector()) {
    CHECK(std::isfinite(v));
    CHECK(v >= 0);
    CHECK(v <= 1);
  }
  CHECK(y.at({3}) == 0.5f);
  CHECK(y.at({4}) == doctest::Approx(1 / (1 + std::exp(-2.0))));
  // e^-80 ~ 1.8e-35 is still a normal float: the stable form keeps it, 1 - 1/(1 + e^-80) would not
  CHECK(y.at({2}) == doctest::Approx(std::exp(-80.0)).epsilon(1e-5));
  CHECK(y.at({6}) == 1);
  CHECK(y.at({0}) == 0);
  CHECK(y.at({7}) == 1);
  sum(y).backward();
  for (real d : x.grad().to_vector()) CHECK(std::isfinite(d));
  CHECK(x.grad().at({3}) == 0.25f);
  CHECK(x.grad().at({0}) == 0);
  CHECK(x.grad().at({7}) == 0);
}

TEST_CASE("unary: relu and abs, with PyTorch's zero derivative at 0") {
  Tensor x = from_vector({-2, -0.5f, 0, 0.5f, 3}, {5});
  CHECK(relu(x).to_vector() == std::vector<real>{0, 0, 0, 0.5f, 3});
  CHECK(abs(x).to_vector() == std::vector<real>{2, 0.5f, 0, 0.5f, 3});
  CHECK(grad_of(relu, {-2, -0.5f, 0, 0.5f, 3}) == std::vector<real>{0, 0, 0, 1, 1});
  CHECK(grad_of(abs, {-2, -0.5f, 0, 0.5f, 3}) == std::vector<real>{-1, -1, 0, 1, 1});
  // NaN propagates through relu, as torch.relu
  CHECK(std::isnan(relu(full({1}, std::numeric_limits<real>::quiet_NaN())).item()));
}

TEST_CASE("unary: gelu exact and tanh forms match reference values") {
  Tensor x = from_vector({-3, -1, 0, 0.5f, 2}, {5});
  // references: x * Phi(x), and 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in double
  check_values(gelu(x), {-0.004049694094890287, -0.15865525393145707, 0.0, 0.34573123063700656,
                         1.9544997361036416});
  check_values(gelu(x, "none"), {-0.004049694094890287, -0.15865525393145707, 0.0,
                                 0.34573123063700656, 1.9544997361036416});
  check_values(gelu(x, "tanh"), {-0.0036373920817729943, -0.15880800939172324, 0.0,
                                 0.34571400982514394, 1.954597694087775});
  // the two forms are close but not equal
  CHECK(gelu(x).at({1}) != gelu(x, "tanh").at({1}));
  // gradients: Phi(x) + x phi(x), and the tanh form's derivative
  Tensor xg = x.detach().requires_grad_();
  sum(gelu(xg)).backward();
  check_values(xg.grad(), {-0.011945647204183927, -0.08331547058768629, 0.5, 0.8674951246561629,
                           1.085231801078197}, 1e-5);
  xg.set_grad(Tensor());
  sum(gelu(xg, "tanh")).backward();
  check_values(xg.grad(), {-0.011584166630969516, -0.08296408384578255, 0.5, 0.8673699035346424,
                           1.0860992566236183}, 1e-5);
  // far tails: finite, ~0 on the left, ~x on the right
  Tensor far = gelu(from_vector({-50, 50}, {2}));
  CHECK(far.at({0}) <= 0);
  CHECK(far.at({0}) > -1e-6f);
  CHECK(far.at({1}) == 50);
}

TEST_CASE("unary: gelu rejects an unknown approximation, naming gelu and the string") {
  CHECK_THROWS_AS(gelu(ones({2}), "exact"), Error);
  CHECK_THROWS_AS(gelu(ones({2}), ""), Error);
  CHECK_THROWS_AS(gelu(ones({2}), "Tanh"), Error);
  CHECK(heed::test::error_of([] { gelu(ones({2}), "exact"); }) ==
        "gelu: approximate must be \"none\" or \"tanh\", got \"exact\"");
}

TEST_CASE("unary: elu values and derivative, including alpha at x = 0") {
  Tensor x = from_vector({-2, -1, 0, 1.5f}, {4});
  check_values(elu(x), {std::expm1(-2.0), std::expm1(-1.0), 0, 1.5});
  check_values(elu(x, 0.5f), {0.5 * std::expm1(-2.0), 0.5 * std::expm1(-1.0), 0, 1.5});
  Tensor xg = x.detach().requires_grad_();
  sum(elu(xg, 0.5f)).backward();
  // dx = alpha e^x for x <= 0 (alpha at 0, as PyTorch), 1 for x > 0
  check_values(xg.grad(), {0.5 * std::exp(-2.0), 0.5 * std::exp(-1.0), 0.5, 1});
  // large negative saturates at -alpha, finite
  CHECK(elu(full({1}, -100), 2).item() == doctest::Approx(-2));
}

TEST_CASE("unary: clamp forward, and gradient that passes at the bounds (as PyTorch)") {
  const std::vector<real> xs = {-2, -1, 0, 1, 2};
  Tensor x = from_vector(xs, {5});
  CHECK(clamp(x, -1, 1).to_vector() == std::vector<real>{-1, -1, 0, 1, 1});
  CHECK(clamp_min(x, 0).to_vector() == std::vector<real>{0, 0, 0, 1, 2});
  CHECK(clamp_max(x, 0).to_vector() == std::vector<real>{-2, -1, 0, 0, 0});
  CHECK(clamp(x, -kInf, kInf).to_vector() == xs);
  // lo > hi: every element becomes hi, as torch.clamp
  CHECK(clamp(x, 1, -1).to_vector() == std::vector<real>{-1, -1, -1, -1, -1});

  auto grad = [&](auto f) {
    Tensor xg = from_vector(xs, {5}).requires_grad_();
    sum(f(xg)).backward();
    return xg.grad().to_vector();
  };
  CHECK(grad([](const Tensor& t) { return clamp(t, -1, 1); }) == std::vector<real>{0, 1, 1, 1, 0});
  CHECK(grad([](const Tensor& t) { return clamp_min(t, 0); }) == std::vector<real>{0, 0, 1, 1, 1});
  CHECK(grad([](const Tensor& t) { return clamp_max(t, 0); }) == std::vector<real>{1, 1, 1, 0, 0});
  CHECK(grad([](const Tensor& t) { return clamp(t, 1, -1); }) == std::vector<real>{0, 0, 0, 0, 0});
  // NaN stays NaN
  CHECK(std::isnan(clamp(full({1}, std::numeric_limits<real>::quiet_NaN()), -1, 1).item()));
}

TEST_CASE("unary: outputs require grad exactly when recording, and the op is named") {
  Tensor p = randn({3}).requires_grad_();
  Tensor outs[] = {exp(p), tanh(p), sigmoid(p), relu(p), gelu(p), elu(p), abs(p), clamp(p, -1, 1)};
  for (const Tensor& y : outs) {
    CHECK(y.requires_grad());
    CHECK_FALSE(y.is_leaf());
  }
  CHECK(std::string(tanh(p).grad_fn()->op_name()) == "tanh");
  CHECK(std::string(gelu(p, "tanh").grad_fn()->op_name()) == "gelu");
  CHECK(std::string(clamp_min(p, 0).grad_fn()->op_name()) == "clamp_min");
  CHECK(std::string(clamp_max(p, 0).grad_fn()->op_name()) == "clamp_max");
  CHECK_FALSE(exp(randn({3})).requires_grad());
  {
    NoGradGuard g;
    CHECK_FALSE(sigmoid(p).requires_grad());
  }
}

TEST_CASE("unary: large tensors (the parallel path) match the serial formula") {
  const int64_t n = 3 * kGrainElementwise + 7;
  Tensor x = randn({n});
  Tensor y = tanh(x);
  for (int64_t i = 0; i < n; i += 997) CHECK(ulps(y.data()[i], std::tanh(double(x.data()[i]))) <= 2);
  Tensor xg = x.detach().requires_grad_();
  sum(relu(xg)).backward();
  for (int64_t i = 0; i < n; i += 997) CHECK(xg.grad().data()[i] == (x.data()[i] > 0 ? 1 : 0));
}

TEST_CASE("unary: empty tensors pass through") {
  Tensor e = zeros({0, 3});
  CHECK(exp(e).shape() == Shape{0, 3});
  CHECK(gelu(e, "tanh").numel() == 0);
  CHECK(clamp(e, 0, 1).shape() == Shape{0, 3});
}
