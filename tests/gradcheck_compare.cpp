// gradcheck_compare.cpp - finite-difference checks (double build) of where, masked_fill,
// triu and tril, with broadcast masks and operands. The masks never require grad.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/compare.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

// A 0/1 mask with roughly half the elements set.
Tensor random_mask(const Shape& s) { return gt(randn(s), 0.0); }

}  // namespace

TEST_CASE("gradcheck where: same shapes and every operand broadcast") {
  manual_seed(21);
  struct Case {
    Shape c, a, b;
  };
  const std::vector<Case> cases = {
      {{2, 3}, {2, 3}, {2, 3}},     {{3, 1}, {2, 3, 4}, {4}},  {{2, 3, 4}, {3, 1}, {}},
      {{4}, {3, 1}, {2, 1, 1}},     {{}, {2, 3}, {2, 3}},      {{2, 1, 4}, {1, 3, 1}, {2, 3, 1}}};
  for (const Case& k : cases) {
    CAPTURE(k.c);
    CAPTURE(k.a);
    CAPTURE(k.b);
    Tensor c = random_mask(k.c), a = param(k.a), b = param(k.b);
    check_grad([](const V& v) { return where(v[0], v[1], v[2]); }, {c, a, b});
    // only one branch requires grad: the other's gradient is skipped
    Tensor bd = b.detach();
    check_grad([](const V& v) { return where(v[0], v[1], v[2]); }, {c, a, bd});
    Tensor ad = a.detach();
    check_grad([](const V& v) { return where(v[0], v[1], v[2]); }, {c, ad, b});
  }
}

TEST_CASE("gradcheck where: the same tensor on both branches, and a mask of all ones") {
  manual_seed(22);
  Tensor x = param({3, 4});
  Tensor c = random_mask({3, 4});
  check_grad([](const V& v) { return where(v[0], v[1] * v[1], -v[1]); }, {c, x});
  check_grad([](const V& v) { return where(v[0], v[1], v[1]); }, {ones({4}), x});
}

TEST_CASE("gradcheck masked_fill: mask equal to, and broadcast up to, x's shape") {
  manual_seed(23);
  Tensor x = param({2, 3, 4});
  for (const Shape& ms : {Shape{2, 3, 4}, Shape{3, 1}, Shape{4}, Shape{}, Shape{2, 1, 4}}) {
    CAPTURE(ms);
    Tensor m = random_mask(ms);
    check_grad([](const V& v) { return masked_fill(v[0], v[1], -3.0); }, {x, m});
    check_grad([](const V& v) { return masked_fill(v[0], v[1], 2.5) * v[0]; }, {x, m});
  }
}

TEST_CASE("gradcheck triu and tril: 2-D, batched, several diagonals") {
  manual_seed(24);
  for (const Shape& s : {Shape{4, 4}, Shape{3, 5}, Shape{5, 3}, Shape{2, 3, 4}}) {
    CAPTURE(s);
    Tensor x = param(s);
    for (int64_t k : {-2, -1, 0, 1, 3}) {
      CAPTURE(k);
      check_grad([k](const V& v) { return triu(v[0], k); }, {x});
      check_grad([k](const V& v) { return tril(v[0], k); }, {x});
    }
  }
}
