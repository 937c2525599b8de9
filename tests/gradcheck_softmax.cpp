// gradcheck_softmax.cpp - finite-difference checks (double build) of softmax and
// log_softmax over every dim, their gradients on masked (-inf) rows, and the fused ops
// against their composed twins.
#include <limits>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_fused_matches_composed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {
const real kInf = std::numeric_limits<real>::infinity();
}

TEST_CASE("softmax, log_softmax (fused) == their composed twins over every dim, values and gradients") {
  manual_seed(40);
  const Tensor x = param({3, 4, 70}, 3.0);  // the last dim wide enough for the vector loops
  for (int64_t d : {0, 1, 2, -1}) {
    CAPTURE(d);
    check_fused_matches_composed([d](const V& v) { return softmax(v[0], d); },
                                 [d](const V& v) { return softmax_reference(v[0], d); }, {x},
                                 1e-10, 1e-13);
    check_fused_matches_composed([d](const V& v) { return log_softmax(v[0], d); },
                                 [d](const V& v) { return log_softmax_reference(v[0], d); }, {x},
                                 1e-10, 1e-12);
  }
}

TEST_CASE("gradcheck softmax and log_softmax over every dim of a 3-D tensor") {
  manual_seed(21);
  Tensor x = param({2, 3, 4}, 2.0);
  for (int d = -3; d < 3; ++d) {
    CAPTURE(d);
    check_grad([d](const V& v) { return softmax(v[0], d); }, {x});
    check_grad([d](const V& v) { return log_softmax(v[0], d); }, {x});
  }
  // inside a graph: the upstream gradient is not all ones and x is used twice
  Tensor w = param({2, 3, 4});
  check_grad([](const V& v) { return softmax(v[0] * v[1], 1) * v[0]; }, {x, w});
  check_grad([](const V& v) { return log_softmax(v[0] + v[1], -1) * v[1]; }, {x, w});
}

TEST_CASE("gradcheck softmax: dim of size 1, a scalar, and large logits") {
  manual_seed(22);
  Tensor x = param({3, 1, 2});
  check_grad([](const V& v) { return softmax(v[0], 1) * v[0]; }, {x});
  check_grad([](const V& v) { return log_softmax(v[0], 1) * v[0]; }, {x});
  Tensor s = param({});
  check_grad([](const V& v) { return softmax(v[0], 0) * v[0]; }, {s});
  Tensor big = (param({2, 5}) + 500.0).detach().requires_grad_();  // exp(500) overflows alone
  check_grad([](const V& v) { return softmax(v[0], 1); }, {big});
  check_grad([](const V& v) { return log_softmax(v[0], 0); }, {big});
}

// Row 0 partly masked, row 1 fully masked, row 2 unmasked.
static Tensor masked_input() {
  Tensor x = from_vector({0.3, -kInf, 1.2, -kInf,    //
                          -kInf, -kInf, -kInf, -kInf,  //
                          0.5, -0.7, 0.1, 2.0},
                         {3, 4});
  return x.requires_grad_();
}

TEST_CASE("gradcheck softmax with -inf entries; a fully masked row has zero gradient") {
  Tensor x = masked_input();
  // -inf +- eps is -inf, so finite differences there are 0, as the analytic gradient must be
  check_grad([](const V& v) { return softmax(v[0], 1); }, {x});

  manual_seed(23);
  Tensor dy = randn({3, 4});
  Tensor y = softmax(x, 1);
  x.set_grad(Tensor());
  y.backward(dy);
  const Tensor g = x.grad();
  for (int64_t j = 0; j < 4; ++j) {
    CAPTURE(j);
    CHECK(y.at({1, j}) == 0);     // masked row: zeros, not NaN
    CHECK(g.at({1, j}) == 0);     // and exactly zero gradient
    CHECK(std::isfinite(g.at({0, j})));
    CHECK(std::isfinite(g.at({2, j})));
    CHECK(g.at({2, j}) != 0);
  }
  CHECK(g.at({0, 1}) == 0);  // masked positions of a live row get none either
  CHECK(g.at({0, 3}) == 0);
  CHECK(g.at({0, 0}) != 0);
}

TEST_CASE("log_softmax with -inf entries: fully masked row is -inf with zero gradient") {
  Tensor x = masked_input();
  const std::vector<real> dyv = {0.4, -1.1, 0.9, 0.2, 1.0, -2.0, 3.0, 0.5, -0.3, 0.8, 0.6, -1.5};
  Tensor y = log_softmax(x, 1);
  y.backward(from_vector(dyv, {3, 4}));
  const Tensor g = x.grad();
  for (int64_t j = 0; j < 4; ++j) {
    CAPTURE(j);
    CHECK(y.at({1, j}) == -kInf);
    CHECK(g.at({1, j}) == 0);
    CHECK(std::isfinite(g.at({0, j})));
  }
  // Row 0 by hand: p = softmax(0.3, 1.2) on the live entries, S = sum of the row's dy
  // (masked entries included: y_k = x_k - lse depends on lse for every k), and
  // dx_k = dy_k - p_k S; a masked entry x_k = -inf has p_k = 0, so dy_k passes through.
  const double p0 = 1 / (1 + std::exp(0.9)), p2 = 1 - p0, S = 0.4 - 1.1 + 0.9 + 0.2;
  CHECK(g.at({0, 0}) == doctest::Approx(0.4 - p0 * S).epsilon(1e-12));
  CHECK(g.at({0, 2}) == doctest::Approx(0.9 - p2 * S).epsilon(1e-12));
  CHECK(g.at({0, 1}) == doctest::Approx(-1.1).epsilon(1e-12));
  CHECK(g.at({0, 3}) == doctest::Approx(0.2).epsilon(1e-12));
  // and the unmasked row passes gradcheck
  Tensor live = from_vector({0.5, -0.7, 0.1, 2.0}, {4}).requires_grad_();
  check_grad([](const V& v) { return log_softmax(v[0], 0); }, {live});
}

TEST_CASE("softmax over a masked non-last dim (strided rows)") {
  // the same masked matrix, transposed by hand: rows become columns, softmax over dim 0
  Tensor x = from_vector({0.3, -kInf, 0.5,     //
                          -kInf, -kInf, -0.7,  //
                          1.2, -kInf, 0.1,     //
                          -kInf, -kInf, 2.0},
                         {4, 3})
                 .requires_grad_();
  check_grad([](const V& v) { return softmax(v[0], 0); }, {x});
  Tensor y = log_softmax(x, 0);
  y.backward(ones({4, 3}));
  for (int64_t k = 0; k < 4; ++k) {
    CAPTURE(k);
    CHECK(y.at({k, 1}) == -kInf);
    CHECK(x.grad().at({k, 1}) == 0);
    CHECK(std::isfinite(x.grad().at({k, 0})));
    CHECK(std::isfinite(x.grad().at({k, 2})));
  }
}
