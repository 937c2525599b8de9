// test_edge_points.cpp - elementwise ops at their edge points give PyTorch's values:
// pow, exp, log and sqrt and their derivatives at x = 0 and -0, negative x, exponents 0, 1,
// +-0.5, 1.5, 2, 3, -1, -2 (d/dx x^0 = 0 also at x = 0, d/dp 0^p = 0 for p >= 0, NaN for a
// negative base with a fractional exponent, the signed infinities at -0).
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

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
