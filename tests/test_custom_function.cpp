// test_custom_function.cpp - heed::autograd::Function and AutogradContext (autograd/engine/function.h):
// forward without recording, backward's gradients per argument, saved tensors with the
// version check, saved_data, mark_non_differentiable, and double backward through a
// backward written with heed ops.
#include <heed/core/elementwise.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/engine/engine.h>
#include <heed/autograd/engine/function.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;
using heed::autograd::AutogradContext;
using heed::autograd::tensor_list;
using heed::test::error_of;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// y = x * c            dx = dy * c   (libtorch's MulConstant example)
struct MulConstant : autograd::Function<MulConstant> {
  static Tensor forward(AutogradContext* ctx, Tensor x, double c) {
    ctx->saved_data["c"] = c;
    return x * real(c);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    return {grad_outputs[0] * real(ctx->saved_data["c"].toDouble()), Tensor()};
  }
};

// y = x W^T + b        dx = dy W   dW = dy^T x   db = sum_rows dy   (libtorch's LinearFunction)
struct LinearFunction : autograd::Function<LinearFunction> {
  static Tensor forward(AutogradContext* ctx, Tensor x, Tensor w, Tensor b = Tensor()) {
    ctx->save_for_backward({x, w, b});
    Tensor y = matmul(x, w.transpose(0, 1));
    return b.defined() ? y + b : y;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const Tensor &x = saved[0], &w = saved[1], &b = saved[2], &dy = grad_outputs[0];
    Tensor dx, dw, db;
    if (ctx->needs_input_grad(0)) dx = matmul(dy, w);
    if (ctx->needs_input_grad(1)) dw = matmul(dy.transpose(0, 1), x);
    if (b.defined() && ctx->needs_input_grad(2)) db = sum(dy, 0);
    return {dx, dw, db};
  }
};

// y = exp(x), saving its output: dx = dy * y (differentiable through y under create_graph)
struct ExpFunction : autograd::Function<ExpFunction> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    CHECK(!GradMode::enabled());  // forward runs with recording off
    Tensor y = exp(x);
    ctx->save_for_backward({y});
    return y;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    return {grad_outputs[0] * ctx->get_saved_variables()[0]};
  }
};

// Returns its argument's values and a mask it marks as not differentiable.
struct Sign : autograd::Function<Sign> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    Tensor s = map(x, [](real v) { return real(v > 0) - real(v < 0); });
    ctx->mark_non_differentiable({s});
    return s;
  }
  static tensor_list backward(AutogradContext*, tensor_list) { return {Tensor()}; }
};

// Two outputs: (x + y, x * y)      dx = da + db * y   dy = da + db * x
struct SumProduct : autograd::Function<SumProduct> {
  static tensor_list forward(AutogradContext* ctx, Tensor x, Tensor y) {
    ctx->save_for_backward({x, y});
    return {x + y, x * y};
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list g) {
    const auto s = ctx->get_saved_variables();
    return {g[0] + g[1] * s[1], g[0] + g[1] * s[0]};
  }
};

struct WrongCount : autograd::Function<WrongCount> {
  static Tensor forward(AutogradContext*, Tensor x, double) { return x * 2; }
  static tensor_list backward(AutogradContext*, tensor_list g) { return {g[0] * 2}; }
};

}  // namespace

// Returns a gradient for its double argument too: refused, as libtorch refuses it.
struct GradForNumber : autograd::Function<GradForNumber> {
  static Tensor forward(AutogradContext*, Tensor x, double c) { return x * real(c); }
  static tensor_list backward(AutogradContext*, tensor_list g) { return {g[0], g[0]}; }
};

// Asks needs_input_grad about argument `ask` (out of range: refused).
struct AskNeeds : autograd::Function<AskNeeds> {
  static Tensor forward(AutogradContext* ctx, Tensor x, int64_t ask) {
    ctx->saved_data["ask"] = ask;
    return x * 2;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list g) {
    const bool needs = ctx->needs_input_grad(int(ctx->saved_data["ask"].toInt()));
    return {needs ? g[0] * 2 : Tensor(), Tensor()};
  }
};

TEST_CASE("autograd::Function: MulConstant and LinearFunction give autograd's gradients") {
  Tensor x = from_vector({1, -2, 3}, {3}).requires_grad_();
  Tensor y = MulConstant::apply(x, 2.5);
  CHECK(y.requires_grad());
  y.sum().backward();
  CHECK(x.grad().at({1}) == doctest::Approx(2.5));

  Tensor a = randn({4, 3}).requires_grad_(), w = randn({2, 3}).requires_grad_(), b = randn({2}).requires_grad_();
  Tensor dy = randn({4, 2});
  LinearFunction::apply(a, w, b).backward(dy);
  const Tensor ga = a.grad(), gw = w.grad(), gb = b.grad();
  for (Tensor t : {a, w, b}) t.set_grad(Tensor());
  (matmul(a, w.transpose(0, 1)) + b).backward(dy);
  CHECK(heed::test::allclose(ga, a.grad()));
  CHECK(heed::test::allclose(gw, w.grad()));
  CHECK(heed::test::allclose(gb, b.grad()));
  // without a bias: the undefined argument gets no gradient
  Tensor a2 = randn({4, 3}).requires_grad_();
  LinearFunction::apply(a2, w.detach(), Tensor()).sum().backward();
  CHECK(a2.grad().defined());
  // the bias left to forward's default: backward's third, undefined gradient is dropped
  Tensor a3 = randn({4, 3}).requires_grad_();
  LinearFunction::apply(a3, w.detach()).sum().backward();
  CHECK(heed::test::allclose(a3.grad(), a2.grad() * 0 + matmul(ones({4, 2}), w.detach())));
}

TEST_CASE("autograd::Function: a backward written with heed ops supports double backward") {
  Tensor x = from_vector({0.5f, -1, 2}, {3}).requires_grad_();
  // d/dx exp(x) = exp(x); d2/dx2 = exp(x): the saved output is differentiable
  Tensor g1 = autograd::grad({ExpFunction::apply(x).sum()}, {x}, {}, std::nullopt, true)[0];
  Tensor g2 = autograd::grad({g1.sum()}, {x})[0];
  CHECK(g2.at({2}) == doctest::Approx(std::exp(2.0)).epsilon(1e-5));
  // a gradient penalty through LinearFunction: d/dw sum((dL/dx)^2), dL/dx = 1 W
  Tensor a = randn({2, 3}).requires_grad_(), w = randn({4, 3}).requires_grad_();
  Tensor ga = autograd::grad({LinearFunction::apply(a, w, Tensor()).sum()}, {a}, {}, std::nullopt, true)[0];
  Tensor dw = autograd::grad({(ga * ga).sum()}, {w})[0];
  Tensor ga_ref = autograd::grad({matmul(a, w.transpose(0, 1)).sum()}, {a}, {}, std::nullopt, true)[0];
  Tensor dw_ref = autograd::grad({(ga_ref * ga_ref).sum()}, {w})[0];
  CHECK(heed::test::allclose(dw, dw_ref));
}

TEST_CASE("autograd::Function: a forward returning a tensor_list") {
  Tensor x = from_vector({1, 2}, {2}).requires_grad_(), y = from_vector({3, -1}, {2}).requires_grad_();
  tensor_list out = SumProduct::apply(x, y);
  REQUIRE(out.size() == 2);
  CHECK(out[1].at({0}) == 3);
  (out[0] * 2 + out[1]).sum().backward();
  CHECK(x.grad().at({0}) == doctest::Approx(2 + 3));  // 2 + y
  CHECK(y.grad().at({1}) == doctest::Approx(2 + 2));  // 2 + x
  x.set_grad(Tensor());
  out = SumProduct::apply(x, y);
  out[1].sum().backward();  // the first output unused: its gradient is zeros
  CHECK(x.grad().at({1}) == doctest::Approx(-1));
}

TEST_CASE("autograd::Function: the version check, saved_data kinds, mark_non_differentiable, errors") {
  Tensor a = randn({2, 3}).requires_grad_(), w = randn({4, 3}).requires_grad_();
  Tensor y = LinearFunction::apply(a, w, Tensor());
  {
    NoGradGuard ng;
    w.mul_(2);  // an optimizer step between forward and backward
  }
  CHECK(contains(error_of([&] { y.sum().backward(); }), "modified by an inplace operation"));

  Tensor s = Sign::apply(from_vector({-1, 2}, {2}).requires_grad_());
  CHECK(!s.requires_grad());
  CHECK(s.at({0}) == -1);

  CHECK(contains(error_of([&] { WrongCount::apply(a, 1.0).sum().backward(); }),
                 "backward returned 1 gradients; expected 2"));
  autograd::SavedValue v(int64_t(3));
  CHECK(v.toDouble() == 3);
  CHECK(contains(error_of([&] { v.toTensor(); }), "saved_data holds an int, read as a tensor"));
}

TEST_CASE("autograd::Function: a gradient for a non-tensor argument and needs_input_grad out of range are refused") {
  Tensor x = randn({3}).requires_grad_();
  const std::string msg = error_of([&] { GradForNumber::apply(x, 2.0).sum().backward(); });
  CHECK(contains(msg, "autograd::Function"));
  CHECK(contains(msg, "argument 1"));
  CHECK(contains(msg, "not a tensor"));
  CHECK_FALSE(x.grad().defined());
  AskNeeds::apply(x, int64_t(0)).sum().backward();
  CHECK(test::allclose(x.grad(), full({3}, 2), 0, 0));
  AskNeeds::apply(x, int64_t(1)).sum().backward();  // the int argument: in range, needs none
  CHECK(test::allclose(x.grad(), full({3}, 2), 0, 0));
  for (int64_t ask : {int64_t(5), int64_t(2), int64_t(-1)}) {
    CAPTURE(ask);
    const std::string m = error_of([&] { AskNeeds::apply(x, ask).sum().backward(); });
    CHECK(contains(m, "autograd::Function"));
    CHECK(contains(m, "needs_input_grad(" + std::to_string(ask) + ")"));
    CHECK(contains(m, "2 arguments"));
  }
}
