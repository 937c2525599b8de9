// test_recompute.cpp - gradient checkpointing (autograd/engine/recompute.h): the same gradients
// as without it, with less peak memory (alloc::PeakScope); dropout replayed; parameters
// captured by fn, non-leaf inputs, nesting, no-grad mode. And alloc::PeakScope itself.
#include <cstring>

#include <heed/core/allocator.h>
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/engine/engine.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/engine/recompute.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/linear.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;
using V = std::vector<Tensor>;

namespace {

// x + fc2(dropout(tanh(fc1(x))))   (B, W) -> (B, W), hidden 4W
struct Block {
  Block(int64_t W, double p) : fc1(nn::Linear(W, 4 * W)), fc2(nn::Linear(4 * W, W)), p(p) {}
  Tensor forward(const Tensor& x) { return x + fc2->forward(dropout(tanh(fc1->forward(x)), p, p > 0)); }
  nn::Linear fc1, fc2;
  double p;
};

struct Stack {
  Stack(int n, int64_t W, double p = 0) {
    for (int i = 0; i < n; ++i) blocks.emplace_back(W, p);
  }
  Tensor forward(Tensor h, bool ckpt) {
    for (Block& b : blocks)
      h = ckpt ? checkpoint([&b](const V& x) { return b.forward(x[0]); }, {h}) : b.forward(h);
    return h;
  }
  std::vector<Tensor> grads() const {
    std::vector<Tensor> g;
    for (const Block& b : blocks)
      for (const nn::LinearImpl* l : {b.fc1.get(), b.fc2.get()}) g.insert(g.end(), {l->weight.grad(), l->bias.grad()});
    return g;
  }
  void zero_grad() {
    for (Block& b : blocks) {
      b.fc1->zero_grad();
      b.fc2->zero_grad();
    }
  }
  std::vector<Block> blocks;
};

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), sizeof(real) * a.numel()) == 0;
}

}  // namespace

TEST_CASE("alloc::PeakScope: peak above the start, nested scopes keep the outer peak") {
  alloc::PeakScope outer;
  CHECK(outer.bytes() == 0);
  { Tensor big = empty({1 << 16}); }
  const int64_t one = int64_t(sizeof(real)) << 16;
  CHECK(outer.bytes() >= one);
  {
    alloc::PeakScope inner;
    CHECK(inner.bytes() == 0);  // the block above was freed before this scope began
    Tensor small = empty({1 << 10});
    CHECK(inner.bytes() >= int64_t(sizeof(real)) << 10);
    CHECK(inner.bytes() < one);
  }
  CHECK(outer.bytes() >= one);  // still sees the earlier, larger peak
  CHECK(alloc::stats().live_bytes == outer.start_live());
}

TEST_CASE("checkpoint: 8 blocks give the same gradients with less peak memory") {
  manual_seed(31);
  const int64_t B = 512, W = 64;
  Stack net(8, W);
  Tensor x = randn({B, W}).requires_grad_();
  const Tensor w = randn({B, W});  // L = sum(net(x) * w)
  int64_t peak[2];
  std::vector<Tensor> g[2], dx(2);
  Tensor loss[2];
  for (int ckpt = 0; ckpt < 2; ++ckpt) {
    net.zero_grad();
    x.set_grad(Tensor());
    alloc::PeakScope scope;
    loss[ckpt] = sum(net.forward(x, ckpt) * w);
    loss[ckpt].backward();
    peak[ckpt] = scope.bytes();
    g[ckpt] = net.grads();
    dx[ckpt] = x.grad();
  }
  CHECK(bitwise_equal(loss[0], loss[1]));
  CHECK(bitwise_equal(dx[0], dx[1]));
  for (size_t i = 0; i < g[0].size(); ++i) {
    CAPTURE(i);
    CHECK(bitwise_equal(g[0][i], g[1][i]));
  }
  const double ratio = double(peak[1]) / double(peak[0]);
  MESSAGE("8 blocks (B=512, W=64, hidden 256), forward+backward peak: " << peak[0]
          << " B without checkpointing, " << peak[1] << " B with (ratio " << ratio << ")");
  CHECK(ratio < 0.6);
}

TEST_CASE("checkpoint: dropout inside is replayed, the gradients equal the plain run's") {
  const int64_t B = 16, W = 8;
  manual_seed(32);
  Stack net(3, W, 0.3);
  Tensor x = randn({B, W}).requires_grad_();
  std::vector<Tensor> g[2];
  Tensor dx[2];
  double next[2];
  for (int ckpt = 0; ckpt < 2; ++ckpt) {
    net.zero_grad();
    x.set_grad(Tensor());
    manual_seed(33);
    sum(net.forward(x, ckpt)).backward();
    next[ckpt] = rand_uniform();  // backward's replay leaves the generator where forward left it
    g[ckpt] = net.grads();
    dx[ckpt] = x.grad();
  }
  CHECK(next[0] == next[1]);
  CHECK(bitwise_equal(dx[0], dx[1]));
  for (size_t i = 0; i < g[0].size(); ++i) CHECK(bitwise_equal(g[0][i], g[1][i]));
}

TEST_CASE("checkpoint: captured parameters get gradients even when no input requires grad") {
  manual_seed(34);
  Stack net(2, 4);
  const Tensor x = randn({3, 4});  // data: no grad
  sum(net.forward(x, false)).backward();
  const std::vector<Tensor> plain = net.grads();
  net.zero_grad();
  const Tensor y = net.forward(x, true);
  CHECK(y.requires_grad());
  sum(y).backward();
  const std::vector<Tensor> ck = net.grads();
  for (size_t i = 0; i < plain.size(); ++i) CHECK(bitwise_equal(plain[i], ck[i]));
}

TEST_CASE("checkpoint: a non-leaf input, several inputs, reuse in the outer graph") {
  manual_seed(35);
  Tensor a = randn({3, 4}).requires_grad_(), b = randn({4, 2}).requires_grad_();
  auto f = [](const V& x) { return sum(tanh(matmul(x[0], x[1])), 1, true) * x[0]; };
  auto outer = [&](bool ckpt) {
    const Tensor h = a * 2 + 1;  // non-leaf
    const Tensor y = ckpt ? checkpoint(f, {h, b}) : f({h, b});
    return sum(y * h);  // h is used outside the block too
  };
  outer(false).backward();
  const Tensor ga = a.grad(), gb = b.grad();
  a.set_grad(Tensor());
  b.set_grad(Tensor());
  outer(true).backward();
  CHECK(allclose(a.grad(), ga, 1e-6, 1e-7));
  CHECK(allclose(b.grad(), gb, 1e-6, 1e-7));
}

TEST_CASE("checkpoint: a weight used inside the block and outside it (one leaf, two graphs)") {
  // The inner backward reaches the same AccumulateGrad node as the outer one, before or
  // after the outer pass has run it; either way the two gradients must add up.
  manual_seed(37);
  Tensor w = randn({4, 4}).requires_grad_();
  const Tensor x = randn({2, 4});
  auto block = [&w](const V& v) { return tanh(matmul(v[0], w)); };
  auto after = [&](bool ckpt) {  // the outer use of w is downstream of the block
    const Tensor y = ckpt ? checkpoint(block, {x}) : block({x});
    return sum(matmul(y, w));
  };
  auto before = [&](bool ckpt) {  // ... and upstream of it
    const Tensor h = matmul(x, w);
    return sum(ckpt ? checkpoint(block, {h}) : block({h}));
  };
  for (int order = 0; order < 2; ++order) {
    CAPTURE(order);
    auto loss = [&](bool ckpt) { return order == 0 ? after(ckpt) : before(ckpt); };
    w.set_grad(Tensor());
    loss(false).backward();
    const Tensor plain = w.grad();
    w.set_grad(Tensor());
    loss(true).backward();
    CHECK(allclose(w.grad(), plain, 1e-6, 1e-7));
  }
}

TEST_CASE("checkpoint: nested, retain_graph, identity fn, no-grad mode, errors") {
  manual_seed(36);
  Tensor w = randn({4, 4}).requires_grad_();
  Tensor x = randn({2, 4}).requires_grad_();
  auto inner = [&w](const V& v) { return tanh(matmul(v[0], w)); };
  auto nested = [&](const V& v) { return checkpoint(inner, {checkpoint(inner, v)}); };
  sum(inner({inner({x})})).backward();
  const Tensor gw = w.grad(), gx = x.grad();
  w.set_grad(Tensor());
  x.set_grad(Tensor());
  const Tensor y = checkpoint(nested, {x});
  sum(y).backward(Tensor(), /*retain_graph=*/true);
  CHECK(allclose(w.grad(), gw, 1e-6, 1e-7));
  CHECK(allclose(x.grad(), gx, 1e-6, 1e-7));
  sum(y).backward();  // a second time through the retained node: gradients double
  CHECK(allclose(w.grad(), gw * 2, 1e-6, 1e-7));

  // fn returning its input: the input itself is left untouched (no grad_fn put on it)
  Tensor leaf = randn({3}).requires_grad_();
  const Tensor same = checkpoint([](const V& v) { return v[0]; }, {leaf});
  CHECK(leaf.is_leaf());
  CHECK_FALSE(same.is_leaf());
  sum(same * 3).backward();
  CHECK(allclose(leaf.grad(), full({3}, 3), 0, 0));

  {
    NoGradGuard ng;
    CHECK_FALSE(checkpoint(inner, {x}).requires_grad());
  }
  CHECK_THROWS_AS(checkpoint(inner, {Tensor()}), Error);
  CHECK_THROWS_AS(checkpoint([](const V&) { return Tensor(); }, {x}), Error);
}

TEST_CASE("checkpoint under autograd::grad: a captured parameter gets its gradient, no .grad() is written") {
  // fn reads W (a leaf) and T = 2 W (a tensor of the enclosing graph) without being handed
  // either: both are edges of the checkpoint node, so autograd::grad reaches W through it.
  manual_seed(38);
  Tensor W = randn({4, 4}).requires_grad_();
  Tensor x = randn({2, 4}).requires_grad_();
  auto loss = [&](bool ckpt) {
    const Tensor T = W * 2;
    auto block = [&W, T](const V& v) { return tanh(matmul(v[0], W)) + matmul(v[0], T); };  // T by value: backward re-runs it
    return sum(pow(ckpt ? checkpoint(block, {x}) : block({x}), 2.0));
  };
  const V plain = autograd::grad({loss(false)}, {x, W});
  for (bool allow_unused : {false, true}) {
    CAPTURE(allow_unused);
    const V ck = autograd::grad({loss(true)}, {x, W}, {}, std::nullopt, false, allow_unused);
    REQUIRE(ck[1].defined());
    CHECK(allclose(ck[0], plain[0], 1e-5, 1e-6));
    CHECK(allclose(ck[1], plain[1], 1e-5, 1e-6));
    CHECK_FALSE(W.grad().defined());
    CHECK_FALSE(x.grad().defined());
  }
  // backward() still sums the gradient through T and the one through W
  loss(true).backward();
  CHECK(allclose(W.grad(), plain[1], 1e-5, 1e-6));
  CHECK(allclose(x.grad(), plain[0], 1e-5, 1e-6));
}

TEST_CASE("checkpoint under create_graph: second derivatives with respect to a captured parameter") {
  manual_seed(39);
  Tensor W = randn({3, 3}).requires_grad_();
  Tensor x = randn({2, 3}).requires_grad_();
  auto block = [&](const V& v) { return tanh(matmul(v[0], W)); };
  auto second = [&](bool ckpt) {
    const Tensor L = sum(pow(ckpt ? checkpoint(block, {x}) : block({x}), 3.0));
    const V g = autograd::grad({L}, {x, W}, {}, std::nullopt, /*create_graph=*/true);
    REQUIRE(g[1].defined());
    REQUIRE(g[1].requires_grad());
    return autograd::grad({sum(g[0] * g[0]) + sum(g[1] * g[1])}, {x, W});
  };
  const V plain = second(false), ck = second(true);
  CHECK(allclose(ck[0], plain[0], 1e-4, 1e-5));
  CHECK(allclose(ck[1], plain[1], 1e-4, 1e-5));
  CHECK_FALSE(W.grad().defined());
}

TEST_CASE("checkpoint: a re-run that reads a tensor the forward did not is refused, naming checkpoint") {
  Tensor a = randn({3}).requires_grad_(), b = randn({3}).requires_grad_();
  int calls = 0;
  const Tensor y = checkpoint([&](const V& v) { return v[0] * (calls++ == 0 ? a : b); }, {randn({3})});
  CHECK_THROWS_WITH_AS(sum(y).backward(), doctest::Contains("checkpoint"), Error);
  CHECK_FALSE(b.grad().defined());
}
