// gradcheck_select_topk.cpp - finite-difference checks (double build) of select and topk
// (its values: the gradient goes back to the chosen entries only).
#include <heed/core/random.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/topk.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

TEST_CASE("gradcheck select: each dim, negative dims and indices, the method form") {
  manual_seed(612);
  Tensor x = param({2, 3, 4});
  for (auto [dim, index] : std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, -1}, {2, 2}, {-1, 0}}) {
    CAPTURE(dim);
    CAPTURE(index);
    check_grad([dim = dim, index = index](const V& v) { return select(v[0], dim, index); }, {x});
    check_grad([dim = dim, index = index](const V& v) { return v[0].select(dim, index); }, {x});
  }
}

TEST_CASE("gradcheck topk: values along each dim, largest and smallest, k = 1 and k = n") {
  manual_seed(613);
  Tensor x = param({3, 4, 5});  // distinct values: no ties for the perturbation to break
  for (int64_t dim : {0, 1, -1})
    for (bool largest : {true, false})
      for (int64_t k : {int64_t{1}, int64_t{3}}) {
        CAPTURE(dim); CAPTURE(largest); CAPTURE(k);
        check_grad([=](const V& v) { return topk(v[0], k, dim, largest).values; }, {x});
      }
  check_grad([](const V& v) { return v[0].topk(5).values; }, {x});  // k = n: a permutation
}
