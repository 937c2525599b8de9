// gradcheck_unary.cpp - finite-difference checks (double build) of the elementwise
// functions in autograd/ops/unary.h. Inputs are kept away from each op's kinks (relu, abs,
// elu and clamp are not differentiable there) and inside each op's domain (log, sqrt).
#include <initializer_list>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

// A leaf of N(0, scale^2) values, none closer than `gap` to any of `kinks`.
Tensor param_away(const Shape& s, std::initializer_list<double> kinks, double scale = 1.0,
                  double gap = 0.1) {
  Tensor t = randn(s);
  real* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = scale * p[i];
    for (double k : kinks)
      if (std::fabs(v - k) < gap) v = v >= k ? k + gap : k - gap;
    p[i] = real(v);
  }
  return t.requires_grad_();
}

// A leaf of values in [lo, lo + width): for log and sqrt, whose domain is x > 0.
Tensor param_positive(const Shape& s, double lo = 0.2, double width = 3.0) {
  Tensor t = rand(s);
  t.mul_(real(width));
  real* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] += real(lo);
  return t.requires_grad_();
}

}  // namespace

TEST_CASE("gradcheck unary: exp tanh sigmoid, including a 0-d tensor") {
  manual_seed(11);
  for (const Shape& s : {Shape{3, 4}, Shape{}, Shape{2, 1, 3}}) {
    CAPTURE(s);
    Tensor x = param(s);
    check_grad([](const V& v) { return exp(v[0]); }, {x});
    check_grad([](const V& v) { return tanh(v[0]); }, {x});
    check_grad([](const V& v) { return sigmoid(v[0]); }, {x});
  }
}

TEST_CASE("gradcheck unary: log and sqrt on positive inputs") {
  manual_seed(12);
  Tensor x = param_positive({3, 5});
  check_grad([](const V& v) { return log(v[0]); }, {x});
  check_grad([](const V& v) { return sqrt(v[0]); }, {x});
  // composed: d/dx log(sqrt(x)) = 1 / (2x)
  check_grad([](const V& v) { return log(sqrt(v[0])) * exp(-v[0]); }, {x});
}

TEST_CASE("gradcheck unary: sigmoid and tanh far into saturation") {
  // At |x| ~ 20 the derivatives are ~1e-9 and ~1e-17: they must be tiny and finite, not NaN.
  Tensor x = from_vector({-30, -20, -8, -1, 0.5, 8, 20, 30}, {8}).requires_grad_();
  check_grad([](const V& v) { return sigmoid(v[0]); }, {x});
  check_grad([](const V& v) { return tanh(v[0]); }, {x});
}

TEST_CASE("gradcheck unary: relu and abs away from 0") {
  manual_seed(13);
  Tensor x = param_away({4, 5}, {0.0});
  check_grad([](const V& v) { return relu(v[0]); }, {x});
  check_grad([](const V& v) { return abs(v[0]); }, {x});
  check_grad([](const V& v) { return relu(v[0]) * abs(v[0]); }, {x});
}

TEST_CASE("gradcheck unary: gelu exact and tanh approximation") {
  manual_seed(14);
  Tensor x = param({4, 6}, 2.0);  // gelu is smooth: no kink to avoid
  check_grad([](const V& v) { return gelu(v[0]); }, {x});
  check_grad([](const V& v) { return gelu(v[0], "none"); }, {x});
  check_grad([](const V& v) { return gelu(v[0], "tanh"); }, {x});
  Tensor far = from_vector({-9, -6, -3, 3, 6, 9}, {6}).requires_grad_();
  check_grad([](const V& v) { return gelu(v[0]); }, {far});
  check_grad([](const V& v) { return gelu(v[0], "tanh"); }, {far});
}

TEST_CASE("gradcheck unary: elu for several alphas, away from 0") {
  manual_seed(15);
  Tensor x = param_away({3, 6}, {0.0}, 2.0);
  for (double alpha : {1.0, 0.5, 2.0, -0.3}) {
    CAPTURE(alpha);
    check_grad([alpha](const V& v) { return elu(v[0], real(alpha)); }, {x});
  }
  check_grad([](const V& v) { return elu(v[0]); }, {x});
}

TEST_CASE("gradcheck unary: leaky_relu for several slopes, away from 0") {
  manual_seed(19);
  Tensor x = param_away({3, 6}, {0.0}, 2.0);
  for (double slope : {0.01, 0.2, 1.5, -0.3}) {
    CAPTURE(slope);
    check_grad([slope](const V& v) { return leaky_relu(v[0], real(slope)); }, {x});
  }
  check_grad([](const V& v) { return leaky_relu(v[0]) * v[0]; }, {x});
}

TEST_CASE("gradcheck unary: softplus for several betas, on both sides of the threshold") {
  manual_seed(20);
  // beta x kept away from the threshold, where softplus switches to x (a kink of size e^-t)
  for (auto [beta, threshold] : {std::pair{1.0, 20.0}, {2.0, 1.0}, {0.5, 0.5}, {-1.5, 2.0}}) {
    CAPTURE(beta);
    Tensor x = param_away({3, 6}, {threshold / beta}, 2.0, 0.2);
    check_grad([beta = beta, threshold = threshold](const V& v) {
      return softplus(v[0], real(beta), real(threshold)) * v[0];
    }, {x});
  }
}

TEST_CASE("gradcheck unary: mish, smooth everywhere") {
  manual_seed(21);
  Tensor x = param_away({3, 6}, {}, 3.0);
  check_grad([](const V& v) { return mish(v[0]); }, {x});
  check_grad([](const V& v) { return mish(v[0]) * v[0]; }, {x});
}

TEST_CASE("gradcheck unary: clamp, clamp_min, clamp_max away from the bounds") {
  manual_seed(16);
  Tensor x = param_away({5, 6}, {-0.5, 0.7}, 1.5);
  check_grad([](const V& v) { return clamp(v[0], -0.5, 0.7); }, {x});
  check_grad([](const V& v) { return clamp_min(v[0], -0.5); }, {x});
  check_grad([](const V& v) { return clamp_max(v[0], 0.7); }, {x});
  // the bounds as infinities: a one-sided clamp
  check_grad([](const V& v) { return clamp(v[0], -0.5, std::numeric_limits<real>::infinity()); }, {x});
  // an input whose elements land in all three regions, used twice in the graph
  check_grad([](const V& v) { return clamp(v[0], -0.5, 0.7) * v[0]; }, {x});
}
