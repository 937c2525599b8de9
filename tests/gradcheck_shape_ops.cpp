// gradcheck_shape_ops.cpp - finite-difference checks (double build) of transpose, permute,
// slice, narrow, cat and stack.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/shape.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

TEST_CASE("gradcheck shape_ops: transpose over several dim pairs, negative dims included") {
  manual_seed(11);
  Tensor x = param({2, 3, 4});
  const std::vector<std::pair<int64_t, int64_t>> pairs = {{0, 1}, {1, 2}, {0, 2}, {-1, -2},
                                                          {2, -3}, {1, 1}};
  for (auto [a, b] : pairs) {
    CAPTURE(a);
    CAPTURE(b);
    check_grad([a = a, b = b](const V& v) { return v[0].transpose(a, b); }, {x});
  }
  Tensor m = param({3, 5});
  check_grad([](const V& v) { return transpose(v[0], 0, 1); }, {m});
  // the last two dims of a (B,H,T,D) tensor, large enough for several 32x32 tiles and a ragged edge
  Tensor q = param({1, 2, 37, 34});
  check_grad([](const V& v) { return v[0].transpose(-2, -1); }, {q});
  // used twice in one graph: gradients from both uses add up
  Tensor s = param({4, 4});
  check_grad([](const V& v) { return v[0].transpose(0, 1) * v[0]; }, {s});
}

TEST_CASE("gradcheck shape_ops: permute of 3-D and 4-D tensors") {
  manual_seed(12);
  Tensor x = param({2, 3, 4});
  const std::vector<std::vector<int64_t>> perms3 = {{2, 0, 1}, {1, 2, 0}, {0, 2, 1}, {-1, 0, -2}};
  for (const auto& p : perms3) {
    CAPTURE(p.size());
    check_grad([p](const V& v) { return v[0].permute(p); }, {x});
  }
  Tensor y = param({2, 3, 2, 4});
  const std::vector<std::vector<int64_t>> perms4 = {{0, 2, 1, 3}, {3, 1, 0, 2}, {0, 1, 3, 2},
                                                    {3, 2, 1, 0}};
  for (const auto& p : perms4) check_grad([p](const V& v) { return permute(v[0], p); }, {y});
}

TEST_CASE("gradcheck shape_ops: slice with steps and negative bounds, narrow") {
  manual_seed(13);
  Tensor x = param({4, 5, 6});
  check_grad([](const V& v) { return slice(v[0], 0, 1, 4, 2); }, {x});
  check_grad([](const V& v) { return slice(v[0], -1, -5, -1, 2); }, {x});
  check_grad([](const V& v) { return slice(v[0], 1, -100, 100, 3); }, {x});
  check_grad([](const V& v) { return slice(v[0], 2, 0, 6, 4); }, {x});
  check_grad([](const V& v) { return slice(v[0], 1, 2, 3); }, {x});
  // a slice of a slice: the backward scatters twice
  check_grad([](const V& v) { return slice(slice(v[0], 2, 1, 6, 2), 0, -3, 4); }, {x});
  for (int d = -3; d < 3; ++d) {
    CAPTURE(d);
    check_grad([d](const V& v) { return narrow(v[0], d, 1, 2); }, {x});
  }
  check_grad([](const V& v) { return narrow(v[0], 2, 0, 6); }, {x});
}

TEST_CASE("gradcheck shape_ops: cat of 3 inputs of different sizes along each dim") {
  manual_seed(14);
  for (int d = 0; d < 3; ++d) {
    CAPTURE(d);
    std::vector<Tensor> xs;
    for (int64_t n : {1, 3, 2}) {
      Shape s{2, 3, 4};
      s[d] = n;
      xs.push_back(param(s));
    }
    check_grad([d](const V& v) { return cat(v, d); }, xs);
    check_grad([d](const V& v) { return cat(v, d - 3); }, xs);  // the same dim, negative
  }
  // an input that needs no grad, and one input used twice
  Tensor a = param({2, 3}), b = randn({1, 3});
  check_grad([](const V& v) { return cat({v[0], v[1], v[0]}, 0); }, {a, b});
}

TEST_CASE("gradcheck shape_ops: stack along each dim") {
  manual_seed(15);
  V xs = {param({2, 3}), param({2, 3}), param({2, 3})};
  for (int d = -3; d < 3; ++d) {
    CAPTURE(d);
    check_grad([d](const V& v) { return stack(v, d); }, xs);
  }
}

// Views that are blocks of their input share its storage (core/tensor.h, "Views"): their
// gradients are the copies' were, dy into zeros at the block, through views of views too.
TEST_CASE("gradcheck shape_ops: block views (x[i], x[i][j], select(0), chunk(0), a view of a narrow)") {
  manual_seed(16);
  Tensor x = param({3, 4, 5});
  check_grad([](const V& v) { return v[0][1]; }, {x});
  check_grad([](const V& v) { return v[0][2][3] * v[0][0][1]; }, {x});
  check_grad([](const V& v) { return select(v[0], 0, -1); }, {x});
  check_grad([](const V& v) { return v[0].chunk(2, 0)[1]; }, {x});
  check_grad([](const V& v) { return narrow(v[0], 0, 1, 2).view({2, 20}) * narrow(v[0], 0, 0, 2).reshape({2, 20}); }, {x});
  check_grad([](const V& v) { return narrow(narrow(v[0], 0, 1, 1), 1, 1, 2); }, {x});  // dim 1 after a size-1 dim
}
