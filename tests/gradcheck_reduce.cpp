// gradcheck_reduce.cpp - finite-difference checks (double build) of max, min and var,
// over all elements and over each dim, with and without keepdim.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

// randn values are distinct (and further apart than gradcheck's eps), so no ties.
TEST_CASE("gradcheck reduce: max and min over all elements") {
  manual_seed(11);
  for (Shape s : {Shape{2, 3, 4}, Shape{5}, Shape{}}) {
    CAPTURE(s);
    Tensor x = param(s);
    check_grad([](const V& v) { return max(v[0]); }, {x});
    check_grad([](const V& v) { return min(v[0]); }, {x});
    check_grad([](const V& v) { return max(v[0]) * min(v[0]); }, {x});
  }
}

TEST_CASE("gradcheck reduce: max and min over each dim, keepdim") {
  manual_seed(12);
  Tensor x = param({2, 3, 4});
  for (int d = -3; d < 3; ++d) {
    CAPTURE(d);
    for (bool keep : {false, true}) {
      CAPTURE(keep);
      check_grad([d, keep](const V& v) { return max(v[0], d, keep).values; }, {x});
      check_grad([d, keep](const V& v) { return min(v[0], d, keep).values; }, {x});
    }
  }
  // inner > 256: the column-chunked kernel with more than one chunk
  Tensor w = param({2, 3, 260});
  check_grad([](const V& v) { return max(v[0], 1).values; }, {w});
  check_grad([](const V& v) { return min(v[0], 0, true).values; }, {w});
  // a scalar reduces over dim 0 to itself
  Tensor s = param({});
  check_grad([](const V& v) { return max(v[0], 0).values; }, {s});
}

TEST_CASE("gradcheck reduce: var over all and each dim, unbiased and not, keepdim") {
  manual_seed(13);
  Tensor x = param({2, 3, 4});
  for (bool unbiased : {true, false}) {
    CAPTURE(unbiased);
    check_grad([unbiased](const V& v) { return var(v[0], unbiased); }, {x});
    for (int d = -3; d < 3; ++d) {
      CAPTURE(d);
      for (bool keep : {false, true}) {
        CAPTURE(keep);
        check_grad([d, unbiased, keep](const V& v) { return var(v[0], d, unbiased, keep); }, {x});
      }
    }
  }
  Tensor w = param({2, 3, 260});
  check_grad([](const V& v) { return var(v[0], 1, true); }, {w});
  Tensor s = param({});  // one element: only the biased variance (0) is defined
  check_grad([](const V& v) { return var(v[0], false); }, {s});
  check_grad([](const V& v) { return var(v[0], 0, false); }, {s});
}

TEST_CASE("gradcheck reduce: max/min/var inside a larger graph") {
  manual_seed(14);
  Tensor x = param({3, 5}), y = param({3, 5});
  check_grad([](const V& v) { return max(v[0] * v[1], 1, true).values * var(v[0] + v[1], 0, true); }, {x, y});
  check_grad([](const V& v) { return min(v[0] - v[1], 0, true).values + max(v[1]); }, {x, y});
}

TEST_CASE("max/min gradient goes to the first occurrence of a tie") {
  Tensor x = from_vector({1, 5, 5, 2, -3, -3}, {2, 3}).requires_grad_();
  max(x).backward();
  CHECK(x.grad().to_vector() == std::vector<real>{0, 1, 0, 0, 0, 0});
  x.set_grad(Tensor());
  min(x).backward();
  CHECK(x.grad().to_vector() == std::vector<real>{0, 0, 0, 0, 1, 0});
  x.set_grad(Tensor());
  // rows (1, 5, 5) and (2, -3, -3): dim 1 max -> k = 1, 0; min -> k = 0, 1
  sum(max(x, 1).values * from_vector({10, 20}, {2})).backward();
  CHECK(x.grad().to_vector() == std::vector<real>{0, 10, 0, 20, 0, 0});
  x.set_grad(Tensor());
  sum(min(x, 1, true).values * from_vector({10, 20}, {2, 1})).backward();
  CHECK(x.grad().to_vector() == std::vector<real>{10, 0, 0, 0, 20, 0});
}

TEST_CASE("var backward matches dy * 2 (x - mean) / (n - 1) exactly") {
  Tensor x = from_vector({1, 2, 4, 7}, {2, 2}).requires_grad_();
  var(x).backward();  // mean 3.5, n - 1 = 3
  const std::vector<real> want = {2 * -2.5 / 3, 2 * -1.5 / 3, 2 * 0.5 / 3, 2 * 3.5 / 3};
  CHECK(heed::test::allclose(x.grad(), from_vector(want, {2, 2}), 1e-12, 1e-12));
  x.set_grad(Tensor());
  var(x, 0, false).backward(from_vector({1, 3}, {2}));  // columns (1, 4) and (2, 7), n = 2
  const std::vector<real> want0 = {2 * -1.5 / 2, 3 * 2 * -2.5 / 2, 2 * 1.5 / 2, 3 * 2 * 2.5 / 2};
  CHECK(heed::test::allclose(x.grad(), from_vector(want0, {2, 2}), 1e-12, 1e-12));
}
