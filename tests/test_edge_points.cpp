// test_edge_points.cpp - elementwise ops at their edge points give PyTorch's values:
// pow, exp, log and sqrt and their derivatives at x = 0 and -0, negative x, exponents 0, 1,
// +-0.5, 1.5, 2, 3, -1, -2 (d/dx x^0 = 0 also at x = 0, d/dp 0^p = 0 for p >= 0, NaN for a
// negative base with a fractional exponent, the signed infinities at -0); clamp, clamp_min,
// clamp_max and relu with NaN in x or in a bound (NaN out, never a bound or x instead).
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/pow.h>
#include <heed/autograd/ops/compare.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Both NaN, the same infinity, or within 1e-6 relative (float build); -0 == 0.
bool same(double got, double want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= 1e-6 * std::max(1.0, std::fabs(want));
}

// y and the gradients of y at one point, dy = 1.
struct Point {
  double y, dx, dp;
};

Point at(double x, double p, bool tensor_exponent) {
  Tensor tx = full({1}, real(x)).requires_grad_(), tp = full({1}, real(p)).requires_grad_();
  Tensor y = tensor_exponent ? pow(tx, tp) : pow(tx, real(p));
  y.backward(ones({1}));
  return {y.data()[0], tx.grad().data()[0], tensor_exponent ? tp.grad().data()[0] : 0.0};
}

}  // namespace

TEST_CASE("pow and its derivatives at edge points are PyTorch's") {
  // {x, p, y, dy/dx for torch.pow(x, float p), then y, dy/dx, dy/dp for torch.pow(x, tensor p)},
  // printed by torch 1.13 in float64 from t = torch.tensor(x, requires_grad=True):
  //   y = t.pow(p); y.backward()        and   y = torch.pow(t, tp); y.backward()
  // (generator: tests/golden/print_pow_edges.py).
  const double table[][7] = {
      {0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0},
      {0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0},
      {0.0, 0.5, 0.0, kInf, 0.0, kInf, 0.0},
      {0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0},
      {0.0, -1.0, kInf, -kInf, kInf, -kInf, -kInf},
      {0.0, -0.5, kInf, -kInf, kInf, -kInf, -kInf},
      {0.0, 1.5, 0.0, 0.0, 0.0, 0.0, 0.0},
      {0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0},
      {0.0, -2.0, kInf, -kInf, kInf, -kInf, -kInf},
      {-0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0},
      {-0.0, 1.0, -0.0, 1.0, -0.0, 1.0, 0.0},
      {-0.0, 0.5, -0.0, -kInf, 0.0, kInf, 0.0},
      {-0.0, 2.0, 0.0, -0.0, 0.0, -0.0, 0.0},
      {-0.0, -1.0, -kInf, -kInf, -kInf, -kInf, kInf},
      {-0.0, -0.5, -kInf, -kInf, kInf, -kInf, -kInf},
      {-0.0, 1.5, 0.0, -0.0, 0.0, 0.0, 0.0},
      {-0.0, 3.0, -0.0, 0.0, -0.0, 0.0, 0.0},
      {-0.0, -2.0, kInf, kInf, kInf, kInf, -kInf},
      {1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0},
      {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0},
      {1.0, 0.5, 1.0, 0.5, 1.0, 0.5, 0.0},
      {1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 0.0},
      {1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 0.0},
      {1.0, -0.5, 1.0, -0.5, 1.0, -0.5, 0.0},
      {1.0, 1.5, 1.0, 1.5, 1.0, 1.5, 0.0},
      {1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 0.0},
      {1.0, -2.0, 1.0, -2.0, 1.0, -2.0, 0.0},
      {-1.0, 0.0, 1.0, 0.0, 1.0, 0.0, kNaN},
      {-1.0, 1.0, -1.0, 1.0, -1.0, 1.0, kNaN},
      {-1.0, 0.5, kNaN, kNaN, kNaN, kNaN, kNaN},
      {-1.0, 2.0, 1.0, -2.0, 1.0, -2.0, kNaN},
      {-1.0, -1.0, -1.0, -1.0, -1.0, -1.0, kNaN},
      {-1.0, -0.5, kNaN, kNaN, kNaN, kNaN, kNaN},
      {-1.0, 1.5, kNaN, kNaN, kNaN, kNaN, kNaN},
      {-1.0, 3.0, -1.0, 3.0, -1.0, 3.0, kNaN},
      {-1.0, -2.0, 1.0, 2.0, 1.0, 2.0, kNaN},
      {2.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.6931471805599453},
      {2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 1.3862943611198906},
      {2.0, 0.5, 1.4142135623730951, 0.35355339059327373, 1.4142135623730951, 0.3535533905932738, 0.9802581434685472},
      {2.0, 2.0, 4.0, 4.0, 4.0, 4.0, 2.772588722239781},
      {2.0, -1.0, 0.5, -0.25, 0.5, -0.25, 0.34657359027997264},
      {2.0, -0.5, 0.7071067811865475, -0.1767766952966369, 0.7071067811865476, -0.1767766952966369, 0.4901290717342736},
      {2.0, 1.5, 2.8284271247461903, 2.121320343559643, 2.8284271247461903, 2.121320343559643, 1.9605162869370945},
      {2.0, 3.0, 8.0, 12.0, 8.0, 12.0, 5.545177444479562},
      {2.0, -2.0, 0.25, -0.25, 0.25, -0.25, 0.17328679513998632},
      {-2.0, 0.0, 1.0, 0.0, 1.0, 0.0, kNaN},
      {-2.0, 1.0, -2.0, 1.0, -2.0, 1.0, kNaN},
      {-2.0, 0.5, kNaN, kNaN, kNaN, kNaN, kNaN},
      {-2.0, 2.0, 4.0, -4.0, 4.0, -4.0, kNaN},
      {-2.0, -1.0, -0.5, -0.25, -0.5, -0.25, kNaN},
      {-2.0, -0.5, kNaN, kNaN, kNaN, kNaN, kNaN},
      {-2.0, 1.5, kNaN, kNaN, kNaN, kNaN, kNaN},
      {-2.0, 3.0, -8.0, 12.0, -8.0, 12.0, kNaN},
      {-2.0, -2.0, 0.25, 0.25, 0.25, 0.25, kNaN},
      {0.5, 0.0, 1.0, 0.0, 1.0, 0.0, -0.6931471805599453},
      {0.5, 1.0, 0.5, 1.0, 0.5, 1.0, -0.34657359027997264},
      {0.5, 0.5, 0.7071067811865476, 0.7071067811865475, 0.7071067811865476, 0.7071067811865476, -0.4901290717342736},
      {0.5, 2.0, 0.25, 1.0, 0.25, 1.0, -0.17328679513998632},
      {0.5, -1.0, 2.0, -4.0, 2.0, -4.0, -1.3862943611198906},
      {0.5, -0.5, 1.414213562373095, -1.4142135623730951, 1.4142135623730951, -1.4142135623730951, -0.9802581434685472},
      {0.5, 1.5, 0.3535533905932738, 1.0606601717798214, 0.3535533905932738, 1.0606601717798214, -0.2450645358671368},
      {0.5, 3.0, 0.125, 0.75, 0.125, 0.75, -0.08664339756999316},
      {0.5, -2.0, 4.0, -16.0, 4.0, -16.0, -2.772588722239781},
  };
  for (const auto& r : table) {
    const std::string where = "x = " + std::to_string(r[0]) + (std::signbit(r[0]) ? " (-0?)" : "") +
                              ", p = " + std::to_string(r[1]);
    CAPTURE(where);
    const Point s = at(r[0], r[1], false), t = at(r[0], r[1], true);
    CHECK(same(s.y, r[2]));
    CHECK(same(s.dx, r[3]));
    CHECK(same(t.y, r[4]));
    CHECK(same(t.dx, r[5]));
    CHECK(same(t.dp, r[6]));
  }
}

TEST_CASE("exp, log and sqrt and their derivatives at edge points are PyTorch's") {
  // {x, exp, d exp, log, d log, sqrt, d sqrt}, torch 1.13 in float64 (tests/golden/print_pow_edges.py)
  const double table[][7] = {
      {0.0, 1.0, 1.0, -kInf, kInf, 0.0, kInf},
      {-0.0, 1.0, 1.0, -kInf, -kInf, -0.0, -kInf},
      {-1.0, 0.36787944117144233, 0.36787944117144233, kNaN, -1.0, kNaN, kNaN},
      {1.0, 2.718281828459045, 2.718281828459045, 0.0, 1.0, 1.0, 0.5},
      {kInf, kInf, kInf, kInf, 0.0, kInf, 0.0},
  };
  for (const auto& r : table) {
    CAPTURE(r[0]);
    int col = 1;
    for (Tensor (*f)(const Tensor&) : {&heed::exp, &heed::log, &heed::sqrt}) {
      Tensor x = full({1}, real(r[0])).requires_grad_();
      Tensor y = f(x);
      y.backward(ones({1}));
      CAPTURE(col);
      CHECK(same(y.data()[0], r[col]));
      CHECK(same(x.grad().data()[0], r[col + 1]));
      col += 2;
    }
  }
}

namespace {

// y and dy/dx (dy = 1) of f at each x.
template <class F>
std::pair<std::vector<double>, std::vector<double>> values(const F& f, const std::vector<double>& xs) {
  Tensor x = empty({int64_t(xs.size())});
  for (size_t i = 0; i < xs.size(); ++i) x.data()[i] = real(xs[i]);
  x.requires_grad_();
  Tensor y = f(x);
  y.backward(ones(y.shape()));
  std::vector<double> yv(y.data(), y.data() + y.numel()), dv(x.grad().data(), x.grad().data() + xs.size());
  return {yv, dv};
}

void check_values(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i); CAPTURE(got[i]); CAPTURE(want[i]);
    CHECK(same(got[i], want[i]));
  }
}

}  // namespace

TEST_CASE("clamp, clamp_min, clamp_max and relu propagate NaN from x and from a bound") {
  // torch 1.13, float64, x = [1, 3, 5, nan, -inf, inf], y = f(x); y.sum().backward():
  //   clamp(x, nan, 4), clamp(x, 2, nan), clamp(x, nan, nan), clamp_min(x, nan)
  //                  y all nan                      dx all 0
  //   clamp(x, 2, 4)  y [2, 3, 4, nan, 2, 4]        dx [0, 1, 0, 0, 0, 0]
  //   clamp(x, 4, 2)  y [2, 2, 2, nan, 2, 2]        dx all 0
  //   clamp(x, max=4) y [1, 3, 4, nan, -inf, 4]     dx [1, 1, 0, 0, 1, 0]
  //   clamp(x, min=2) y [2, 3, 5, nan, 2, inf]      dx [0, 1, 1, 0, 0, 1]
  //   relu(x)         y [1, 3, 5, nan, 0, inf]      dx [1, 1, 1, 1, 0, 1]
  // (torch.clamp(x, min=nan) with no max keeps x in 1.13, unlike clamp_min(x, nan); heed's
  // one-sided clamps are clamp_min / clamp_max, which follow torch.clamp_min / clamp_max.)
  const std::vector<double> x = {1, 3, 5, kNaN, -kInf, kInf};
  const std::vector<double> all_nan(6, kNaN), all_zero(6, 0.0);
  for (auto [lo, hi] : {std::pair<real, real>{NAN, 4}, {2, NAN}, {NAN, NAN}}) {
    CAPTURE(lo); CAPTURE(hi);
    auto [y, dx] = values([lo = lo, hi = hi](const Tensor& t) { return clamp(t, lo, hi); }, x);
    check_values(y, all_nan);
    check_values(dx, all_zero);
  }
  for (bool min_side : {true, false}) {
    CAPTURE(min_side);
    auto [y, dx] = values([min_side](const Tensor& t) {
      return min_side ? clamp_min(t, NAN) : clamp_max(t, NAN);
    }, x);
    check_values(y, all_nan);
    check_values(dx, all_zero);
  }
  auto [y1, d1] = values([](const Tensor& t) { return clamp(t, 2, 4); }, x);
  check_values(y1, {2, 3, 4, kNaN, 2, 4});
  check_values(d1, {0, 1, 0, 0, 0, 0});
  auto [y2, d2] = values([](const Tensor& t) { return clamp(t, 4, 2); }, x);
  check_values(y2, {2, 2, 2, kNaN, 2, 2});
  check_values(d2, all_zero);
  auto [y3, d3] = values([](const Tensor& t) { return clamp_max(t, 4); }, x);
  check_values(y3, {1, 3, 4, kNaN, -kInf, 4});
  check_values(d3, {1, 1, 0, 0, 1, 0});
  auto [y4, d4] = values([](const Tensor& t) { return clamp_min(t, 2); }, x);
  check_values(y4, {2, 3, 5, kNaN, 2, kInf});
  check_values(d4, {0, 1, 1, 0, 0, 1});
  auto [y5, d5] = values([](const Tensor& t) { return relu(t); }, x);
  check_values(y5, {1, 3, 5, kNaN, 0, kInf});
  check_values(d5, {1, 1, 1, 1, 0, 1});
}
