// gradcheck_arith.cpp - finite-difference checks (double build) of arithmetic, matmul,
// sum/mean/sum_to/expand and the views.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/pow.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/ops/views.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

TEST_CASE("gradcheck add sub mul div, same shape and broadcast") {
  manual_seed(1);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 1, 4}, {3, 1}}, {{4}, {}}, {{}, {2, 2}}};
  for (auto [sa, sb] : cases) {
    CAPTURE(sa);
    CAPTURE(sb);
    Tensor a = param(sa), b = param(sb);
    Tensor bp = (abs(param(sb)) + 0.5).detach().requires_grad_();  // away from 0 for div
    check_grad([](const V& x) { return x[0] + x[1]; }, {a, b});
    check_grad([](const V& x) { return x[0] - x[1]; }, {a, b});
    check_grad([](const V& x) { return x[0] * x[1]; }, {a, b});
    check_grad([](const V& x) { return x[0] / x[1]; }, {a, bp});
  }
}

TEST_CASE("gradcheck neg, pow, scalar operators, clone") {
  manual_seed(2);
  Tensor x = (abs(param({3, 4})) + 0.5).detach().requires_grad_();
  Tensor p = param({4}, 0.5);
  check_grad([](const V& v) { return -v[0]; }, {x});
  check_grad([](const V& v) { return pow(v[0], 3.0); }, {x});
  check_grad([](const V& v) { return pow(v[0], -0.5); }, {x});
  check_grad([](const V& v) { return pow(v[0], v[1]); }, {x, p});
  check_grad([](const V& v) { return 2.0 * v[0] - 1.0 + v[0] / 3.0 + 1.0 / v[0]; }, {x});
  check_grad([](const V& v) { return clone(v[0]) * v[0]; }, {x});
}

TEST_CASE("gradcheck matmul: 2-D, batched, broadcast batch, vectors") {
  manual_seed(3);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 4}, {4, 5}},       {{2, 3, 4}, {4, 5}},    {{2, 3, 4}, {2, 4, 5}},
      {{2, 1, 3, 4}, {3, 4, 2}}, {{3, 4}, {2, 4, 5}}, {{4}, {4}},
      {{4}, {4, 5}},          {{3, 4}, {4}}};
  for (auto [sa, sb] : cases) {
    CAPTURE(sa);
    CAPTURE(sb);
    Tensor a = param(sa), b = param(sb);
    check_grad([](const V& v) { return matmul(v[0], v[1]); }, {a, b});
  }
}

TEST_CASE("gradcheck sum and mean over all and each dim, sum_to, expand") {
  manual_seed(4);
  Tensor x = param({2, 3, 4});
  check_grad([](const V& v) { return sum(v[0]); }, {x});
  check_grad([](const V& v) { return mean(v[0]); }, {x});
  for (int d = -3; d < 3; ++d) {
    CAPTURE(d);
    for (bool keep : {false, true}) {
      check_grad([d, keep](const V& v) { return sum(v[0], d, keep); }, {x});
      check_grad([d, keep](const V& v) { return mean(v[0], d, keep); }, {x});
    }
  }
  check_grad([](const V& v) { return sum_to(v[0], {3, 1}); }, {x});
  check_grad([](const V& v) { return sum_to(v[0], {1, 4}); }, {x});
  Tensor s = param({3, 1});
  check_grad([](const V& v) { return expand(v[0], {2, 3, 4}); }, {s});
}

TEST_CASE("gradcheck reshape, squeeze, unsqueeze, flatten") {
  manual_seed(5);
  Tensor x = param({2, 3, 1});
  check_grad([](const V& v) { return v[0].reshape({3, 2}) * v[0].reshape({3, 2}); }, {x});
  check_grad([](const V& v) { return v[0].squeeze(2).unsqueeze(0); }, {x});
  check_grad([](const V& v) { return flatten(v[0]); }, {x});
}

TEST_CASE("autograd: accumulation, reuse, retain_graph, non-scalar backward") {
  Tensor x = from_vector({1, 2, 3}, {3}).requires_grad_();
  Tensor y = sum(x * x);  // dy/dx = 2x
  y.backward(Tensor(), true);
  CHECK(x.grad().to_vector() == std::vector<real>{2, 4, 6});
  y.backward();  // accumulates
  CHECK(x.grad().to_vector() == std::vector<real>{4, 8, 12});
  CHECK_THROWS_AS(y.backward(), Error);  // saved tensors were freed
  x.zero_grad();
  CHECK(x.grad().to_vector() == std::vector<real>{0, 0, 0});
  Tensor z = x * 3;  // non-scalar: needs an explicit upstream gradient
  CHECK_THROWS_AS(z.backward(), Error);
  z.backward(from_vector({1, 0, 2}, {3}));
  CHECK(x.grad().to_vector() == std::vector<real>{3, 0, 6});
  {
    NoGradGuard g;
    CHECK_FALSE((x * 2).requires_grad());
  }
  CHECK_FALSE(x.detach().requires_grad());
  CHECK_THROWS_AS(zeros({2}).backward(), Error);
}

TEST_CASE("a very long graph is built, differentiated and freed without deep recursion") {
  Tensor x = ones({1}).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 200000; ++i) y = y * 1.0;
  sum(y).backward();
  CHECK(x.grad().item() == 1);
  y = Tensor();  // frees 200k nodes
}
