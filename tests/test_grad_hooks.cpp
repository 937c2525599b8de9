// test_grad_hooks.cpp - post-accumulate gradient hooks on leaves (autograd/engine/engine.cpp).
#include <algorithm>

#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;

static bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("a post-accumulate hook runs once per backward, after the leaf's gradient is final") {
  Tensor w = from_vector({1, 2, 3}, {3}).requires_grad_();
  std::vector<std::vector<real>> seen;
  int64_t h = w.register_post_accumulate_grad_hook(
      [&](const Tensor& leaf) { seen.push_back(leaf.grad().to_vector()); });
  // w reaches the loss along two paths: the hook must see their sum, not a partial.
  Tensor loss = sum(w * w) + sum(w * 3.0);  // dL/dw = 2w + 3
  loss.backward();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == std::vector<real>{5, 7, 9});
  // A second backward accumulates, and the hook sees the running total.
  (sum(w) * 2.0).backward();
  REQUIRE(seen.size() == 2);
  CHECK(seen[1] == std::vector<real>{7, 9, 11});
  w.remove_post_accumulate_grad_hook(h);
  sum(w).backward();
  CHECK(seen.size() == 2);
  w.remove_post_accumulate_grad_hook(h);  // a removed handle is a no-op
}

TEST_CASE("post-accumulate hooks fire in backward order, one per leaf") {
  Tensor a = from_vector({1}, {1}).requires_grad_();
  Tensor b = from_vector({2}, {1}).requires_grad_();
  std::vector<char> order;
  a.register_post_accumulate_grad_hook([&](const Tensor&) { order.push_back('a'); });
  b.register_post_accumulate_grad_hook([&](const Tensor&) { order.push_back('b'); });
  // b is used last in the forward, so its gradient is final first.
  Tensor y = sum(tanh(a * 2.0) * b);
  y.backward();
  CHECK(order.size() == 2);
  CHECK(std::count(order.begin(), order.end(), 'a') == 1);
  CHECK(std::count(order.begin(), order.end(), 'b') == 1);
}

TEST_CASE("a post-accumulate hook needs a leaf that requires grad") {
  Tensor x = ones({2});
  CHECK(contains(error_of([&] { x.register_post_accumulate_grad_hook([](const Tensor&) {}); }),
                 "register_post_accumulate_grad_hook: only a leaf"));
  Tensor w = ones({2}).requires_grad_();
  Tensor y = w * 2.0;
  CHECK(contains(error_of([&] { y.register_post_accumulate_grad_hook([](const Tensor&) {}); }),
                 "is not a leaf"));
}
