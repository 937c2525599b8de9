// gradcheck_derivative.cpp - autograd/ops/derivative.h used from outside the library, as a new
// op in any file uses it (double build): an op written here with map_recording_derivative
// passes gradcheck and gradgradcheck, its third derivative raises, and a program that needs
// no gradient gets f alone (no node).
#include <cmath>

#include <heed/core/fastmath.h>
#include <heed/core/random.h>
#include <heed/autograd/ops/derivative.h>
#include <heed/autograd/engine/engine.h>
#include <heed/autograd/engine/gradcheck.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/reduce.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

// y = x / (1 + |x|)    dx = dy / (1 + |x|)^2    f'' = -2 sign(x) / (1 + |x|)^3   (softsign)
Tensor softsign(const Tensor& x) {
  return map_recording_derivative("softsign", x, [](real v) { return v / (1 + std::abs(v)); },
      [](real v, real& d) {
        const real a = 1 + std::abs(v);
        d = 1 / (a * a);
        return v / a;
      },
      [](real v) {
        const real a = 1 + std::abs(v);
        return -2 * (v > 0 ? 1 : -1) / (a * a * a);
      });
}

}  // namespace

TEST_CASE("derivative.h from outside the library: an op's gradient, second derivative, and third (raises)") {
  manual_seed(22);
  Tensor x = param({3, 4}, 2.0);
  for (int64_t i = 0; i < x.numel(); ++i)  // off the kink of f'' at 0
    if (std::abs(x.data()[i]) < real(0.2)) x.data()[i] = real(0.2);
  check_grad([](const V& v) { return softsign(v[0]) * v[0]; }, {x});
  const GradcheckResult r = gradgradcheck([](const V& v) { return softsign(v[0]) * v[0]; }, {x});
  CHECK_MESSAGE(r.ok, r.message);
  Tensor d1 = autograd::grad({sum(softsign(x))}, {x}, {}, std::nullopt, true)[0];
  Tensor d2 = autograd::grad({sum(d1)}, {x}, {}, std::nullopt, true)[0];
  CHECK(d2.at({0, 0}) == doctest::Approx(-2 * (x.at({0, 0}) > 0 ? 1 : -1) /
                                         std::pow(1 + std::abs(x.at({0, 0})), 3)));
  CHECK_THROWS_AS(autograd::grad({sum(d2)}, {x}), Error);
  NoGradGuard off;
  CHECK(!softsign(x).requires_grad());  // f alone: nothing recorded, no y' written
}
