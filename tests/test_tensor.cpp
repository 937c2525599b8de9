// test_tensor.cpp - tensor basics: factories, views, in-place rules, errors, seeding.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/views.h>
#include "helpers.h"

using namespace heed;

TEST_CASE("factories fill shapes and values") {
  Tensor z = zeros({2, 3});
  CHECK(z.shape() == Shape{2, 3});
  CHECK(z.numel() == 6);
  CHECK(sum(z).item() == 0);
  CHECK(sum(ones({4})).item() == 4);
  CHECK(full({2}, 7).at({1}) == 7);
  Tensor a = arange(1, 4);
  CHECK(a.to_vector() == std::vector<real>{1, 2, 3});
  CHECK(arange(5).numel() == 5);
  CHECK(from_vector({1, 2, 3, 4}, {2, 2}).at({1, 0}) == 3);
  CHECK_THROWS_AS(from_vector({1, 2, 3}, {2, 2}), Error);
}

TEST_CASE("manual_seed makes randn repeat") {
  manual_seed(3);
  Tensor a = randn({5});
  manual_seed(3);
  Tensor b = randn({5});
  CHECK(a.to_vector() == b.to_vector());
  Tensor u = rand({1000});
  CHECK(max(u).item() < 1);
  CHECK(min(u).item() >= 0);
}

TEST_CASE("reshape and detach share storage") {
  Tensor x = arange(6);
  Tensor r = x.reshape({2, -1});
  CHECK(r.shape() == Shape{2, 3});
  CHECK(r.data() == x.data());
  CHECK(x.detach().data() == x.data());
  CHECK_THROWS_AS(x.reshape({4, -1}), Error);
  CHECK(flatten(zeros({2, 3, 4}), 1).shape() == Shape{2, 12});
  CHECK(x.unsqueeze(0).shape() == Shape{1, 6});
}

TEST_CASE("in-place update of a leaf that requires grad needs NoGradGuard") {
  Tensor w = ones({3}).requires_grad_();
  CHECK_THROWS_AS(w.add_(ones({3})), Error);
  {
    NoGradGuard g;
    w.add_(ones({3}), 2);
  }
  CHECK(w.at({0}) == 3);
}

TEST_CASE("errors name the op and the shapes") {
  CHECK(heed::test::error_of([] { matmul(zeros({2, 3}), zeros({4, 5})); }) ==
        "matmul: shapes (2,3) and (4,5) do not align");
  CHECK(heed::test::error_of([] { add(zeros({2, 3}), zeros({4})); }) ==
        "add: shapes (2,3) and (4) cannot be broadcast");
  CHECK_THROWS_AS(zeros({2}).item(), Error);
  CHECK_THROWS_AS(zeros({2}).at({2}), Error);
  CHECK_THROWS_AS(IndexTensor({0, 5}).check_range("embedding", 5), Error);
}

TEST_CASE("broadcasting arithmetic matches hand-computed values") {
  Tensor a = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = from_vector({10, 20, 30}, {3});
  CHECK((a + b).to_vector() == std::vector<real>{11, 22, 33, 14, 25, 36});
  Tensor c = from_vector({100, 200}, {2, 1});
  CHECK((a * c).to_vector() == std::vector<real>{100, 200, 300, 800, 1000, 1200});
  CHECK((2 - a).to_vector() == std::vector<real>{1, 0, -1, -2, -3, -4});
  CHECK((zeros({2, 1, 4}) + zeros({3, 1})).shape() == Shape{2, 3, 4});
  CHECK((zeros({2, 1, 0}) + zeros({3, 1})).shape() == Shape{2, 3, 0});  // empty, no division by 0
}
