// test_softmax.cpp - softmax and log_softmax (float build): values against hand computation
// and a naive double-precision reference, stability, masked rows, NaN, the parallel paths
// (forward and backward), and errors.
#include <algorithm>
#include <limits>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;

namespace {

const real kInf = std::numeric_limits<real>::infinity();

// Naive reference in double: x seen as (outer, n, inner), each row x[o, :, i] normalised.
Tensor softmax_ref(const Tensor& x, int d, bool log) {
  const Shape s = x.shape();
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < d; ++i) outer *= s[i];
  for (int i = d + 1; i < s.size(); ++i) inner *= s[i];
  const int64_t n = s[d];
  Tensor y = empty(s);
  const real* px = x.data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return (o * n + k) * inner + i; };
      double m = -1e300, z = 0;
      for (int64_t k = 0; k < n; ++k) m = std::max(m, double(px[at(k)]));
      for (int64_t k = 0; k < n; ++k) z += std::exp(double(px[at(k)]) - m);
      for (int64_t k = 0; k < n; ++k) {
        const double v = double(px[at(k)]) - m;
        y.data()[at(k)] = real(log ? v - std::log(z) : std::exp(v) / z);
      }
    }
  return y;
}

// The gradients the backward kernels must give, by the formulas, from y and dy:
//   softmax dx = y * (dy - sum(dy * y)),   log_softmax dx = dy - exp(y) * sum(dy)
Tensor softmax_grad_ref(const Tensor& y, const Tensor& dy, int d, bool log) {
  const Shape s = y.shape();
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < d; ++i) outer *= s[i];
  for (int i = d + 1; i < s.size(); ++i) inner *= s[i];
  const int64_t n = s[d];
  Tensor dx = empty(s);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return (o * n + k) * inner + i; };
      double acc = 0;
      for (int64_t k = 0; k < n; ++k)
        acc += log ? double(dy.data()[at(k)]) : double(dy.data()[at(k)]) * y.data()[at(k)];
      for (int64_t k = 0; k < n; ++k) {
        const double yk = y.data()[at(k)], dyk = dy.data()[at(k)];
        dx.data()[at(k)] = real(log ? dyk - std::exp(yk) * acc : yk * (dyk - acc));
      }
    }
  return dx;
}

}  // namespace

TEST_CASE("softmax and log_softmax of a row, by hand") {
  Tensor x = from_vector({1, 2, 3}, {3});
  // exp(1), exp(2), exp(3) over their sum 30.1928...
  const std::vector<real> p = {0.0900306, 0.2447285, 0.6652410};
  CHECK(allclose(softmax(x, 0), from_vector(p, {3}), 1e-5, 1e-7));
  CHECK(allclose(softmax(x, -1), from_vector(p, {3}), 1e-5, 1e-7));
  // log_softmax = x - log(30.1928) = x - 3.4076059
  CHECK(allclose(log_softmax(x, 0), from_vector({-2.4076059, -1.4076059, -0.4076059}, {3}), 1e-5,
                 1e-6));
  // equal logits: uniform
  CHECK(allclose(softmax(full({2, 4}, 3), 1), full({2, 4}, 0.25)));
  CHECK(softmax(scalar_tensor(-7), 0).item() == 1);
  CHECK(log_softmax(scalar_tensor(-7), 0).item() == 0);
  CHECK(allclose(softmax(from_vector({5, -5}, {2, 1}), 1), ones({2, 1})));  // dim of size 1
}

TEST_CASE("softmax and log_softmax over every dim match the naive reference") {
  manual_seed(41);
  Tensor x = randn({3, 4, 5});
  x.mul_(3);
  for (int d = -3; d < 3; ++d) {
    CAPTURE(d);
    const int dd = d < 0 ? d + 3 : d;
    Tensor y = softmax(x, d), l = log_softmax(x, d);
    CHECK(y.shape() == x.shape());
    CHECK(allclose(y, softmax_ref(x, dd, false), 1e-5, 1e-7));
    CHECK(allclose(l, softmax_ref(x, dd, true), 1e-5, 1e-5));
    CHECK(allclose(sum(y, d), ones(sum(x, d).shape()), 1e-5, 1e-6));  // rows sum to 1
    bool in_range = true;
    for (real v : y.to_vector()) in_range = in_range && v > 0 && v < 1;
    CHECK(in_range);
  }
}

TEST_CASE("softmax is stable: softmax(x + 1000) == softmax(x)") {
  // quarter steps are exact in float even after adding 1000, so the rows are the same
  // numbers shifted, and the max subtracted brings them back exactly
  Tensor x = from_vector({0.25, -1.5, 2, 0.75, 3.5, -2.25}, {2, 3});
  for (int d : {0, 1}) {
    CAPTURE(d);
    CHECK(allclose(softmax(x + 1000, d), softmax(x, d), 1e-6, 1e-7));
    CHECK(allclose(softmax(x - 1000, d), softmax(x, d), 1e-6, 1e-7));
    CHECK(allclose(log_softmax(x + 1000, d), log_softmax(x, d), 1e-6, 1e-6));
  }
  // and far beyond exp's range the result is still finite and sums to 1
  Tensor big = from_vector({1e30, 1e30, -1e30, 0}, {4});
  CHECK(allclose(softmax(big, 0), from_vector({0.5, 0.5, 0, 0}, {4})));
  CHECK(allclose(softmax(from_vector({1e4, 0}, {2}), 0), from_vector({1, 0}, {2})));
  CHECK(log_softmax(from_vector({1e4, 0}, {2}), 0).at({1}) == -1e4);
}

TEST_CASE("masked rows: -inf entries get 0, a fully masked row gives zeros, not NaN") {
  Tensor x = from_vector({1, -kInf, 1, -kInf, -kInf, -kInf}, {2, 3});
  Tensor y = softmax(x, 1);
  CHECK(y.to_vector() == std::vector<real>{0.5, 0, 0.5, 0, 0, 0});
  Tensor l = log_softmax(x, 1);
  CHECK(l.at({0, 0}) == doctest::Approx(-std::log(2.0)));
  CHECK(l.at({0, 1}) == -kInf);
  for (int64_t j = 0; j < 3; ++j) CHECK(l.at({1, j}) == -kInf);
  // the same along dim 0 (strided rows)
  Tensor xt = from_vector({1, -kInf, -kInf, -kInf, 1, -kInf}, {3, 2});
  CHECK(softmax(xt, 0).to_vector() == std::vector<real>{0.5, 0, 0, 0, 0.5, 0});
  // gradients: zero on the masked row and the masked entries, finite everywhere
  Tensor p = x.detach().requires_grad_();
  softmax(p, 1).backward(from_vector({1, 2, 3, 4, 5, 6}, {2, 3}));
  CHECK(p.grad().to_vector() == std::vector<real>{-0.5, 0, 0.5, 0, 0, 0});
  p.set_grad(Tensor());
  log_softmax(p, 1).backward(ones({2, 3}));
  const std::vector<real> g = p.grad().to_vector();
  CHECK(g[0] == doctest::Approx(1 - 0.5 * 3));
  CHECK(g[3] == 0);
  CHECK(g[4] == 0);
  CHECK(g[5] == 0);
  for (real v : g) CHECK(std::isfinite(v));
}

TEST_CASE("NaN in a row makes that row NaN, not the others") {
  const real nan = std::numeric_limits<real>::quiet_NaN();
  Tensor x = from_vector({1, nan, 2, 0, 1, 2, nan, -kInf, -kInf}, {3, 3});
  Tensor y = softmax(x, 1), l = log_softmax(x, 1);
  for (int64_t j = 0; j < 3; ++j) {
    CHECK(std::isnan(y.at({0, j})));
    CHECK(std::isfinite(y.at({1, j})));
    CHECK(std::isnan(y.at({2, j})));  // NaN with -inf is not "fully masked"
    CHECK(std::isnan(l.at({2, j})));
  }
}

TEST_CASE("large tensors (parallel paths) match the reference, forward and backward") {
  manual_seed(42);
  // (64, 1024): contiguous rows, parallel over 64 rows; (256, 16, 32) over dim 1:
  // strided rows, parallel over 8192 of them
  const std::vector<std::pair<Shape, int>> cases = {{{64, 1024}, 1}, {{256, 16, 32}, 1},
                                                    {{40, 2000}, 0}};
  for (auto [s, d] : cases) {
    CAPTURE(s);
    CAPTURE(d);
    Tensor x = randn(s);
    x.mul_(4);
    for (bool log : {false, true}) {
      CAPTURE(log);
      Tensor p = x.detach().requires_grad_();
      Tensor y = log ? log_softmax(p, d) : softmax(p, d);
      CHECK(allclose(y, softmax_ref(x, d, log), 1e-4, log ? 1e-5 : 1e-7));
      Tensor dy = randn(s);
      y.backward(dy);
      CHECK(allclose(p.grad(), softmax_grad_ref(y.detach(), dy, d, log), 1e-3, 1e-6));
    }
  }
}

TEST_CASE("softmax records a graph only when needed; errors name the op") {
  Tensor x = randn({2, 3});
  CHECK_FALSE(softmax(x, 1).requires_grad());
  CHECK(softmax(x.detach().requires_grad_(), 1).requires_grad());
  CHECK_THROWS_AS(softmax(x, 2), Error);
  CHECK_THROWS_AS(log_softmax(x, -3), Error);
  CHECK(heed::test::error_of([&] { log_softmax(x, 5); }).rfind("log_softmax: ", 0) == 0);
  CHECK(softmax(zeros({0, 3}), 1).shape() == Shape{0, 3});  // empty in, empty out
  CHECK(softmax(zeros({3, 0}), 0).shape() == Shape{3, 0});
  CHECK(log_softmax(zeros({2, 3, 0}), 1).shape() == Shape{2, 3, 0});
}
