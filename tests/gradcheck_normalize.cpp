// gradcheck_normalize.cpp - finite-difference checks (double build) of log1p and normalize.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/normalize.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

TEST_CASE("gradcheck log1p on (-0.8, 3)") {
  manual_seed(21);
  Tensor x = (rand({3, 4}) * real(3.8) - real(0.8)).detach().requires_grad_();
  check_grad([](const V& v) { return log1p(v[0]); }, {x});
  check_grad([](const V& v) { return log1p(v[0]) * v[0]; }, {x});
}

TEST_CASE("gradcheck normalize: p = 1, 2, 3 over each dim; rows below eps") {
  manual_seed(22);
  Tensor x = param({3, 4, 5});
  for (double p : {1.0, 2.0, 3.0})
    for (int64_t dim : {0, 1, 2, -1}) {
      CAPTURE(p);
      CAPTURE(dim);
      check_grad([p, dim](const V& v) { return normalize(v[0], p, dim); }, {x});
    }
  // eps larger than some rows' norms: those rows are divided by eps, a constant.
  Tensor mixed = from_vector({0.01, -0.02, 0.03, 0.5, -0.7, 0.2}, {2, 3}).requires_grad_();
  check_grad([](const V& v) { return normalize(v[0], 2, 1, 0.15); }, {mixed});
}
