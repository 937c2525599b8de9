// test_compare.cpp - comparisons, logical_not, where, masked_fill, triu/tril: values
// against hand-computed ones, gradient routing, broadcasting, and error messages.
#include <limits>

#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/compare.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/ops/views.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;

namespace {

using Vec = std::vector<real>;

}  // namespace

TEST_CASE("compare: the six comparisons, tensor-tensor and tensor-scalar") {
  Tensor a = from_vector({1, 2, 3, 4}, {4});
  Tensor b = from_vector({4, 2, 1, 4}, {4});
  CHECK(eq(a, b).to_vector() == Vec{0, 1, 0, 1});
  CHECK(ne(a, b).to_vector() == Vec{1, 0, 1, 0});
  CHECK(lt(a, b).to_vector() == Vec{1, 0, 0, 0});
  CHECK(le(a, b).to_vector() == Vec{1, 1, 0, 1});
  CHECK(gt(a, b).to_vector() == Vec{0, 0, 1, 0});
  CHECK(ge(a, b).to_vector() == Vec{0, 1, 1, 1});
  CHECK(eq(a, 2).to_vector() == Vec{0, 1, 0, 0});
  CHECK(ne(a, 2).to_vector() == Vec{1, 0, 1, 1});
  CHECK(lt(a, 2).to_vector() == Vec{1, 0, 0, 0});
  CHECK(le(a, 2).to_vector() == Vec{1, 1, 0, 0});
  CHECK(gt(a, 2).to_vector() == Vec{0, 0, 1, 1});
  CHECK(ge(a, 2).to_vector() == Vec{0, 1, 1, 1});
  CHECK(eq(a, 2).shape() == Shape{4});
  // NaN compares unequal to everything, itself included
  Tensor n = full({1}, std::numeric_limits<real>::quiet_NaN());
  CHECK(eq(n, n).item() == 0);
  CHECK(ne(n, n).item() == 1);
  CHECK(lt(n, 0).item() == 0);
  CHECK(ge(n, 0).item() == 0);
}

TEST_CASE("compare: comparisons broadcast and name the op when shapes clash") {
  Tensor col = from_vector({1, 2, 3}, {3, 1});
  Tensor row = from_vector({1, 2}, {2});
  Tensor g = gt(col, row);
  CHECK(g.shape() == Shape{3, 2});
  CHECK(g.to_vector() == Vec{0, 0, 1, 0, 1, 1});
  CHECK(le(scalar_tensor(2), row).to_vector() == Vec{0, 1});
  CHECK(error_of([] { eq(zeros({2, 3}), zeros({4})); }) ==
        "eq: shapes (2,3) and (4) cannot be broadcast");
  CHECK_THROWS_AS(lt(zeros({2}), zeros({3})), Error);
}

TEST_CASE("compare: outputs never require grad, even from inputs that do") {
  Tensor a = randn({3}).requires_grad_();
  Tensor b = randn({3}).requires_grad_();
  for (const Tensor& m : {eq(a, b), ne(a, b), lt(a, b), le(a, b), gt(a, b), ge(a, b), gt(a, 0.0f),
                          le(a, 0.0f), logical_not(a)}) {
    CHECK_FALSE(m.requires_grad());
    CHECK(m.is_leaf());
  }
}

TEST_CASE("compare: logical_not flips a mask; any nonzero counts as true") {
  Tensor m = from_vector({0, 1, 0, -2, 0.5f}, {5});
  CHECK(logical_not(m).to_vector() == Vec{1, 0, 1, 0, 0});
  CHECK(logical_not(logical_not(m)).to_vector() == Vec{0, 1, 0, 1, 1});
}

TEST_CASE("where: selects by mask with all three operands broadcast") {
  Tensor cond = from_vector({1, 0, 1}, {3, 1});              // (3, 1)
  Tensor a = from_vector({10, 20}, {2});                      // (2)
  Tensor b = scalar_tensor(-1);                               // ()
  Tensor y = where(cond, a, b);                               // (3, 2)
  CHECK(y.shape() == Shape{3, 2});
  CHECK(y.to_vector() == Vec{10, 20, -1, -1, 10, 20});
  // nonzero (not only 1) selects a
  CHECK(where(from_vector({0, -3, 0.25f}, {3}), ones({3}), zeros({3})).to_vector() == Vec{0, 1, 1});
  CHECK(where(gt(a, 15), a, zeros({2, 1})).shape() == Shape{2, 2});
  CHECK(error_of([] { where(zeros({2}), zeros({3}), zeros({1})); }) ==
        "where: shapes (2), (3) and (1) cannot be broadcast");
  CHECK_THROWS_AS(where(zeros({2, 1}), zeros({3}), zeros({4})), Error);
}

TEST_CASE("where: gradients go to the selected branch, summed over broadcast dims") {
  Tensor cond = from_vector({1, 0, 1}, {3, 1});
  Tensor a = from_vector({10, 20}, {2}).requires_grad_();
  Tensor b = scalar_tensor(-1).requires_grad_();
  Tensor c = cond.detach().requires_grad_();  // a mask that requires grad gets none
  Tensor y = where(c, a, b);
  CHECK(y.requires_grad());
  sum(y * from_vector({1, 2, 3, 4, 5, 6}, {3, 2})).backward();
  CHECK(a.grad().to_vector() == Vec{1 + 5, 2 + 6});  // rows 0 and 2
  CHECK(b.grad().shape() == Shape{});
  CHECK(b.grad().item() == 3 + 4);                     // row 1
  CHECK_FALSE(c.grad().defined());
  // an infinite dy where a was not taken gives a 0 gradient, not inf * 0 = NaN:
  // log(where(c, x, 0)) = (0, -inf), so dy = 1 / (1, 0) = (1, inf)
  Tensor x = from_vector({1, 2}, {2}).requires_grad_();
  sum(log(where(from_vector({1, 0}, {2}), x, zeros({2})))).backward();
  CHECK(x.grad().to_vector() == Vec{1, 0});
  CHECK_FALSE(where(cond, zeros({2}), ones({2})).requires_grad());
}

TEST_CASE("masked_fill: fills where the broadcast mask is set; no gradient there") {
  Tensor x = from_vector({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  Tensor mask = from_vector({0, 1, 1}, {3});  // broadcast over rows
  Tensor y = masked_fill(x, mask, -100);
  CHECK(y.shape() == Shape{2, 3});
  CHECK(y.to_vector() == Vec{1, -100, -100, 4, -100, -100});
  sum(y * 2).backward();
  CHECK(x.grad().to_vector() == Vec{2, 0, 0, 2, 0, 0});
  // column mask, -inf fill (the attention use), scalar mask
  Tensor col = from_vector({1, 0}, {2, 1});
  Tensor z = masked_fill(x.detach(), col, -std::numeric_limits<real>::infinity());
  CHECK(std::isinf(z.at({0, 2})));
  CHECK(z.at({1, 2}) == 6);
  CHECK(masked_fill(x.detach(), scalar_tensor(1), 7).to_vector() == Vec{7, 7, 7, 7, 7, 7});
  CHECK(masked_fill(x.detach(), scalar_tensor(0), 7).to_vector() == Vec{1, 2, 3, 4, 5, 6});
}

TEST_CASE("masked_fill: a mask that does not broadcast to x's shape is an error") {
  CHECK(error_of([] { masked_fill(zeros({3}), zeros({2, 3}), 0); }) ==
        "masked_fill: mask of shape (2,3) cannot be broadcast to x of shape (3)");
  CHECK(error_of([] { masked_fill(zeros({2, 3}), zeros({2}), 0); }) ==
        "masked_fill: mask of shape (2) cannot be broadcast to x of shape (2,3)");
  // broadcastable together, but the result would be bigger than x
  CHECK_THROWS_AS(masked_fill(zeros({2, 1}), zeros({1, 3}), 0), Error);
  CHECK_THROWS_AS(masked_fill(zeros({3}), zeros({1, 3}), 0), Error);
}

TEST_CASE("triu and tril: values for several diagonals, square and not") {
  Tensor x = arange(1, 13).reshape({3, 4});
  // 1  2  3  4
  // 5  6  7  8
  // 9 10 11 12
  CHECK(triu(x).to_vector() == Vec{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12});
  CHECK(triu(x, 1).to_vector() == Vec{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12});
  CHECK(triu(x, -1).to_vector() == Vec{1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12});
  CHECK(tril(x).to_vector() == Vec{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0});
  CHECK(tril(x, 1).to_vector() == Vec{1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12});
  CHECK(tril(x, -1).to_vector() == Vec{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
  // beyond the matrix: everything kept or nothing
  CHECK(triu(x, 4).to_vector() == Vec(12, 0));
  CHECK(triu(x, -3).to_vector() == x.to_vector());
  CHECK(tril(x, -3).to_vector() == Vec(12, 0));
  CHECK(tril(x, 3).to_vector() == x.to_vector());
  CHECK(tril(x, std::numeric_limits<int64_t>::max()).to_vector() == x.to_vector());
  CHECK(triu(x, std::numeric_limits<int64_t>::min()).to_vector() == x.to_vector());
  // triu(k) + tril(k - 1) == x
  for (int64_t k = -3; k <= 4; ++k) CHECK((triu(x, k) + tril(x, k - 1)).to_vector() == x.to_vector());
}

TEST_CASE("triu and tril: batched over leading dims, gradient masked the same way") {
  Tensor x = ones({2, 2, 3}).requires_grad_();
  Tensor y = tril(x);
  CHECK(y.shape() == Shape{2, 2, 3});
  CHECK(y.to_vector() == Vec{1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0});
  sum(y * 3).backward();
  CHECK(x.grad().to_vector() == Vec{3, 0, 0, 3, 3, 0, 3, 0, 0, 3, 3, 0});
  x.set_grad(Tensor());
  sum(triu(x, 1)).backward();
  CHECK(x.grad().to_vector() == Vec{0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1});
}

TEST_CASE("triu and tril: need rank >= 2") {
  CHECK(error_of([] { triu(zeros({3})); }) == "triu: needs a tensor of rank >= 2, got shape (3)");
  CHECK(error_of([] { tril(scalar_tensor(1)); }) == "tril: needs a tensor of rank >= 2, got shape ()");
  CHECK(triu(zeros({0, 3})).shape() == Shape{0, 3});
  CHECK(tril(zeros({2, 0})).shape() == Shape{2, 0});
}
