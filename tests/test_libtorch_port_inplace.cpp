// test_libtorch_port_inplace.cpp - libtorch's in-place and method forms (add_ sub_ mul_ div_
// exp_ clamp_, x.add(y) ...), recorded on a non-leaf as x += y is and refused on a leaf that
// requires grad; the *_like factories; and the traps a port falls into: grad() is a const
// reference (mutable_grad() assigns), heed::tensor(int64_t) is an id, data_ptr<float>().
#include <cmath>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/engine/node.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/unary.h>
#include <heed/core/random.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;
using heed::test::error_of;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The gradient of sum(f(x) * w) in x, for one leaf x.
Tensor grad_of(const std::function<Tensor(const Tensor&)>& f, const Tensor& x0) {
  Tensor x = x0.detach().clone().requires_grad_();
  Tensor w = arange(real(x0.numel())).reshape(x0.shape()) + 1;
  (f(x) * w).sum().backward();
  return x.grad();
}

}  // namespace

TEST_CASE("in place on a non-leaf: add_ sub_ mul_ div_ exp_ clamp_ are recorded, as x += y") {
  const Tensor x0 = from_vector({-1.5, -0.2, 0.3, 2.0}, {4});
  const Tensor c = from_vector({0.5, 2, -1, 3}, {4});
  auto in_place = [&](const Tensor& x) {
    Tensor y = x * 2;  // a non-leaf that requires grad
    y.add_(c).sub_(c, 0.5).mul_(c).div_(real(4)).exp_().clamp_(0.5, 2.5);
    y.add_(real(1)).sub_(real(0.25)).mul_(real(3)).div_(c);
    return y;
  };
  auto composed = [&](const Tensor& x) {
    const Tensor y = clamp(exp((x * 2 + c - c * real(0.5)) * c / real(4)), 0.5, 2.5);
    return (y + real(1) - real(0.25)) * real(3) / c;
  };
  CHECK(allclose(in_place(x0), composed(x0)));
  CHECK(allclose(grad_of(in_place, x0), grad_of(composed, x0)));
  Tensor x = x0.detach().clone().requires_grad_();
  Tensor y = x * 2;
  y.add_(c);
  CHECK(y.grad_fn()->name() == "AddBackward0");
  // an argument that requires grad is recorded too, into a tensor that did not
  Tensor plain = zeros({4});
  plain.add_(x, 2);
  plain.sum().backward();
  CHECK(x.grad().to_vector() == std::vector<real>{2, 2, 2, 2});
}

TEST_CASE("in place on a leaf that requires grad: refused in grad mode, written under NoGradGuard") {
  Tensor w = ones({3}).requires_grad_();
  for (const auto& [op, f] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"add_", [&] { w.add_(real(1)); }}, {"sub_", [&] { w.sub_(ones({3})); }},
           {"mul_", [&] { w.mul_(real(2)); }}, {"div_", [&] { w.div_(ones({3})); }},
           {"exp_", [&] { w.exp_(); }},        {"clamp_", [&] { w.clamp_(0, 1); }}}) {
    CAPTURE(op);
    const std::string e = error_of(f);
    CHECK(contains(e, op + ": a leaf that requires grad cannot be updated in place while grad mode is on"));
  }
  real* before = w.data();
  {
    NoGradGuard g;
    w.mul_(from_vector({1, 2, 3}, {3})).add_(real(1)).exp_().clamp_(0, 10).sub_(real(1)).div_(real(2));
  }
  CHECK(w.data() == before);  // the same storage, written in place
  CHECK(w.version() == 6);
  CHECK(allclose(w, from_vector({real((std::exp(2.0) - 1) / 2), real(4.5), real(4.5)}, {3})));
  CHECK(w.is_leaf());
  Tensor x = zeros({2, 3});
  x.add_(from_vector({1, 2, 3}, {3}));  // broadcasts to x's shape, as libtorch's
  CHECK(x.to_vector() == std::vector<real>{1, 2, 3, 1, 2, 3});
}

TEST_CASE("methods: x.add(y) x.sub(y) x.mul(y) x.div(y), with a tensor or a number") {
  const Tensor x = from_vector({1, 2, 3}, {3}), y = from_vector({4, 5, 6}, {3});
  CHECK(x.add(y).to_vector() == std::vector<real>{5, 7, 9});
  CHECK(x.add(y, 2).to_vector() == std::vector<real>{9, 12, 15});
  CHECK(x.add(1).to_vector() == std::vector<real>{2, 3, 4});
  CHECK(y.sub(x).to_vector() == std::vector<real>{3, 3, 3});
  CHECK(y.sub(x, 2).to_vector() == std::vector<real>{2, 1, 0});
  CHECK(y.sub(1).to_vector() == std::vector<real>{3, 4, 5});
  CHECK(x.mul(y).to_vector() == std::vector<real>{4, 10, 18});
  CHECK(x.mul(2).to_vector() == std::vector<real>{2, 4, 6});
  CHECK(y.div(x).to_vector() == std::vector<real>{4, 2.5, 2});
  CHECK(x.div(2).to_vector() == std::vector<real>{0.5, 1, 1.5});
}

TEST_CASE("factories: randn_like, rand_like, full_like take the shape of their argument") {
  const Tensor t = zeros({3, 4}).requires_grad_();
  manual_seed(5);
  const Tensor a = randn_like(t), u = rand_like(t);
  manual_seed(5);
  CHECK(a.to_vector() == randn({3, 4}).to_vector());
  CHECK(u.to_vector() == rand({3, 4}).to_vector());
  CHECK_FALSE(a.requires_grad());
  CHECK(full_like(t, 2.5).to_vector() == std::vector<real>(12, 2.5));
  CHECK(full_like(t, 2.5).shape() == Shape{3, 4});
}

// grad() as libtorch's: a const reference, so that `p.grad() = Tensor()` does not compile
// (in 0.4.0 it assigned a copy and changed nothing).
static_assert(!std::is_assignable_v<decltype(std::declval<Tensor>().grad()), Tensor>,
              "p.grad() = Tensor() must not compile");
static_assert(std::is_same_v<decltype(std::declval<const Tensor&>().mutable_grad()), Tensor&>);
// An integer scalar is an id, as libtorch's kLong tensor: never a silent float.
static_assert(std::is_same_v<decltype(heed::tensor(int64_t(3))), IndexTensor>);
static_assert(std::is_same_v<decltype(heed::tensor(3)), IndexTensor>);
static_assert(std::is_same_v<decltype(heed::tensor(3.0)), Tensor>);
static_assert(std::is_same_v<decltype(std::declval<Tensor>().data_ptr<real>()), real*>);

TEST_CASE("traps: mutable_grad() assigns and zeros the gradient, grad().zero_() works as libtorch's") {
  Tensor p = from_vector({1, 2}, {2}).requires_grad_();
  (p * p).sum().backward();
  CHECK(p.grad().to_vector() == std::vector<real>{2, 4});
  p.grad().zero_();  // const in libtorch too: the values, not the handle
  CHECK(p.grad().to_vector() == std::vector<real>{0, 0});
  p.mutable_grad() = Tensor();
  CHECK_FALSE(p.grad().defined());
  p.mutable_grad() = ones({2});
  CHECK(p.grad().to_vector() == std::vector<real>{1, 1});
  const Tensor& g = p.grad();  // the gradient itself, not a copy
  p.mutable_grad().mul_(3);
  CHECK(g.to_vector() == std::vector<real>{3, 3});
}

TEST_CASE("traps: heed::tensor(label) is a 0-D id; data_ptr<float>() is data()") {
  const int64_t label = 7;
  const IndexTensor y = heed::tensor(label);
  CHECK(y.shape() == Shape{});
  CHECK(y.item() == 7);
  CHECK(heed::tensor(3, kLong).item() == 3);
  CHECK(contains(error_of([] { heed::tensor(3, kFloat); }),
                 "tensor: an integer (3) makes an id, an IndexTensor of kLong; for a float scalar write tensor(double(3))"));
  CHECK(heed::tensor(double(label)).item() == 7);
  Tensor x = from_vector({1, 2}, {2});
  CHECK(x.data_ptr<real>() == x.data());
  x.data_ptr<real>()[1] = 5;
  CHECK(x.at({1}) == 5);
}
