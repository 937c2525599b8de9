// test_higher_order.cpp - higher-order gradients: backward(create_graph), autograd::grad,
// what a first-order-only op does under create_graph (a delayed heed::Error), the version
// check across orders, and the plain-Tensor capture check of record().
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/block_sparse_attention.h>
#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/autograd/ops/gru_layer.h>
#include <heed/autograd/ops/lstm_layer.h>
#include <heed/autograd/engine/engine.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/engine/node.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("create_graph: x.grad() is differentiable, to the third order") {
  Tensor x = from_vector({1, 2, -3}, {3}).requires_grad_();
  Tensor y = (x * x * x).sum();
  y.backward({}, std::nullopt, true);  // dy/dx = 3 x^2, with a graph
  Tensor g1 = x.grad();
  REQUIRE(g1.requires_grad());
  CHECK(g1.at({1}) == doctest::Approx(12));
  Tensor g2 = autograd::grad({g1.sum()}, {x}, {}, std::nullopt, true)[0];  // 6 x
  CHECK(g2.at({2}) == doctest::Approx(-18));
  Tensor g3 = autograd::grad({g2.sum()}, {x})[0];  // 6
  CHECK(g3.at({0}) == doctest::Approx(6));
  CHECK(!g3.requires_grad());
  x.set_grad(Tensor());  // breaks the cycle leaf -> grad -> graph -> leaf (engine.cpp)
}

TEST_CASE("create_graph keeps the graph by default (retain_graph defaults to create_graph)") {
  Tensor x = from_vector({0.5f, -1}, {2}).requires_grad_();
  Tensor y = tanh(x).sum();
  y.backward({}, std::nullopt, true);
  y.backward();  // the graph was kept: a second pass adds the gradient again
  const real t = std::tanh(0.5f);
  CHECK(x.grad().at({0}) == doctest::Approx(2 * (1 - t * t)));
  Tensor z = tanh(x).sum();
  z.backward();
  CHECK(contains(error_of([&] { z.backward(); }), "retain_graph=true"));
  x.set_grad(Tensor());
}

TEST_CASE("backward(g, retain_graph) then reading .grad() is a number, not a differentiable gradient") {
  // The mistake a gradient penalty ported from PyTorch makes: the penalty built from .grad()
  // after a plain backward has no graph, so it would contribute no gradient. heed says so
  // (penalty.requires_grad() is false, and backward on it is an error); with create_graph
  // (or autograd::grad) the penalty is differentiable.
  Tensor w = from_vector({0.5f, -2}, {2}).requires_grad_();
  Tensor x = from_vector({1, 3}, {2}).requires_grad_();
  Tensor out = (tanh(x * w)).sum();
  out.backward({}, true);
  Tensor penalty = (x.grad() * x.grad()).sum();
  CHECK(!x.grad().requires_grad());
  CHECK(!penalty.requires_grad());
  CHECK(contains(error_of([&] { penalty.backward(); }), "does not require grad"));

  Tensor gx = autograd::grad({(tanh(x * w)).sum()}, {x}, {}, std::nullopt, true)[0];
  Tensor p2 = (gx * gx).sum();
  REQUIRE(p2.requires_grad());
  Tensor dw = autograd::grad({p2}, {w})[0];
  CHECK(dw.abs().sum().item() > 0);
}

TEST_CASE("autograd::grad returns gradients and leaves .grad() untouched") {
  Tensor a = from_vector({1, 2}, {2}).requires_grad_();
  Tensor b = from_vector({3, 4}, {2}).requires_grad_();
  Tensor c = from_vector({5, 6}, {2}).requires_grad_();
  Tensor h = a * b;  // a non-leaf input
  Tensor y = (h * h).sum();
  auto g = autograd::grad({y}, {a, h}, {}, true);
  CHECK(g[0].at({1}) == doctest::Approx(2 * 8 * 4));  // 2 h b
  CHECK(g[1].at({0}) == doctest::Approx(2 * 3));      // 2 h
  CHECK(!a.grad().defined());
  CHECK(!b.grad().defined());
  // an input the outputs do not depend on
  std::string e = error_of([&] { autograd::grad({y}, {a, c}, {}, true); });
  CHECK(contains(e, "autograd::grad"));
  CHECK(contains(e, "input 1 (shape (2)) was not used"));
  auto u = autograd::grad({y}, {c, a}, {}, true, false, true);
  CHECK(!u[0].defined());
  CHECK(u[1].at({0}) == doctest::Approx(2 * 3 * 3));
  // grad_outputs for a non-scalar output, and two outputs summed
  auto v = autograd::grad({h, a * 2}, {a}, {ones({2}), full({2}, 10)});
  CHECK(v[0].at({0}) == doctest::Approx(3 + 20));
  CHECK(contains(error_of([&] { autograd::grad({h}, {a}); }), "one-element output"));
  CHECK(contains(error_of([&] { autograd::grad({y}, {from_vector({1}, {1})}); }), "does not require grad"));
}

TEST_CASE("Hessian-vector product of a quadratic form through matmul") {
  // f(x) = x^T A x / 2 (A symmetric): H = A, so H v = A v
  Tensor A = from_vector({2, 1, 0, 1, 3, -1, 0, -1, 4}, {3, 3});
  Tensor x = from_vector({1, -2, 0.5f}, {3}).requires_grad_();
  Tensor v = from_vector({0.5f, 1, -1}, {3});
  Tensor f = (x * matmul(A, x)).sum() * 0.5f;
  Tensor gx = autograd::grad({f}, {x}, {}, std::nullopt, true)[0];
  Tensor hv = autograd::grad({gx}, {x}, {v})[0];
  Tensor expect = matmul(A, v);
  for (int64_t i = 0; i < 3; ++i) CHECK(hv.at({i}) == doctest::Approx(expect.at({i})));
}

TEST_CASE("an op without double backward: first order works under create_graph, differentiating again raises naming it") {
  manual_seed(35);
  Tensor q = randn({1, 2, 4, 8}).requires_grad_(), k = randn({1, 2, 4, 8}).requires_grad_(),
         v = randn({1, 2, 4, 8}).requires_grad_();
  Tensor plain = autograd::grad({flash_attention(q, k, v).sum()}, {q})[0];
  Tensor gq = autograd::grad({flash_attention(q, k, v).sum()}, {q}, {}, std::nullopt, true)[0];
  CHECK(heed::test::allclose(gq.detach(), plain));  // the first-order numbers are the same
  REQUIRE(gq.requires_grad());
  const std::string e = error_of([&] { autograd::grad({(gq * gq).sum()}, {q}); });
  CHECK(contains(e, "flash attention's backward is not differentiable"));
  CHECK(contains(e, "scaled_dot_product_attention"));
}

TEST_CASE("record_derivative (derivative.h): the second derivative is the hand-written f'', a third raises") {
  // softplus: f'' = s (1 - s), s = sigmoid(x); gelu and mish are recorded the same way
  Tensor x = from_vector({-2, 0.5f, 3}, {3}).requires_grad_();
  Tensor g1 = autograd::grad({softplus(x).sum()}, {x}, {}, std::nullopt, true)[0];   // s
  Tensor g2 = autograd::grad({g1.sum()}, {x}, {}, std::nullopt, true)[0];             // s (1 - s)
  for (int64_t i = 0; i < 3; ++i) {
    const double s = 1 / (1 + std::exp(-double(x.at({i}))));
    CHECK(g1.at({i}) == doctest::Approx(s));
    CHECK(g2.at({i}) == doctest::Approx(s * (1 - s)));
  }
  for (auto f : {+[](const Tensor& t) { return softplus(t); }, +[](const Tensor& t) { return mish(t); },
                 +[](const Tensor& t) { return gelu(t); }}) {
    Tensor d1 = autograd::grad({f(x).sum()}, {x}, {}, std::nullopt, true)[0];
    Tensor d2 = autograd::grad({d1.sum()}, {x}, {}, std::nullopt, true)[0];
    REQUIRE(d2.requires_grad());
    CHECK_THROWS_AS(autograd::grad({d2.sum()}, {x}), Error);  // never a silent 0
  }
}

TEST_CASE("the fused block-sparse, LSTM-layer and GRU-layer kernels raise when differentiated twice, naming the alternative") {
  manual_seed(36);
  Tensor q = randn({1, 1, 8, 4}).requires_grad_(), k = randn({1, 1, 8, 4}).requires_grad_(),
         v = randn({1, 1, 8, 4}).requires_grad_();
  const BlockLayout layout = sliding_window_layout(8, 4, 1);
  Tensor gq = autograd::grad({block_sparse_attention(q, k, v, layout).sum()}, {q}, {}, std::nullopt, true)[0];
  std::string e = error_of([&] { autograd::grad({(gq * gq).sum()}, {q}); });
  CHECK(contains(e, "block-sparse attention's backward is not differentiable"));
  CHECK(contains(e, "block_sparse_attention_composed"));

  const int64_t B = 2, T = 3, In = 3, H = 2;
  Tensor x = randn({B, T, In}).requires_grad_();
  Tensor w_ih = randn({4 * H, In}).requires_grad_(), w_hh = randn({4 * H, H}).requires_grad_();
  auto lstm = lstm_layer(x, zeros({B, H}), zeros({B, H}), {w_ih, w_hh}, {}, false);
  Tensor gx = autograd::grad({lstm.out.sum()}, {x}, {}, std::nullopt, true)[0];
  e = error_of([&] { autograd::grad({(gx * gx).sum()}, {w_ih}); });
  CHECK(contains(e, "lstm_layer"));
  CHECK(contains(e, "nn::LSTMCell"));

  Tensor g_ih = randn({3 * H, In}).requires_grad_(), g_hh = randn({3 * H, H}).requires_grad_();
  auto gru = gru_layer(x, zeros({B, H}), {g_ih, g_hh}, {}, false);
  Tensor gx2 = autograd::grad({gru.out.sum()}, {x}, {}, std::nullopt, true)[0];
  e = error_of([&] { autograd::grad({(gx2 * gx2).sum()}, {g_hh}); });
  CHECK(contains(e, "gru_layer"));
  CHECK(contains(e, "nn::GRUCell"));
}

TEST_CASE("the version check holds across orders") {
  Tensor x = from_vector({1, 2}, {2}).requires_grad_();
  Tensor gx = autograd::grad({(x * x * x).sum()}, {x}, {}, std::nullopt, true)[0];
  {
    NoGradGuard ng;
    x.add_(ones({2}));  // written in place after the first-order graph saved it
  }
  CHECK(contains(error_of([&] { autograd::grad({gx.sum()}, {x}); }),
                 "modified by an inplace operation"));
}

#ifndef NDEBUG
TEST_CASE("record(): a backward closure that holds an input as a plain Tensor is refused") {
  Tensor x = from_vector({1, 2}, {2}).requires_grad_();
  Tensor y = empty({2});
  const std::string e = error_of([&] {
    record("plain_capture", y, {x}, [x](const Tensor& dy, Grads& g) { g[0] = mul(dy, x); });
  });
  CHECK(contains(e, "plain_capture"));
  CHECK(contains(e, "SavedTensor"));
  Tensor z = empty({2});
  record("saved_capture", z, {x}, [x = SavedTensor(x)](const Tensor& dy, Grads& g) { g[0] = mul(dy, x); });
  CHECK(z.requires_grad());
}
#endif
