// test_engine_accumulate.cpp - the engine sums a node's incoming gradients in place only
// when it owns the buffer (autograd/engine/engine.cpp, accumulate_pending).
#include <heed/core/allocator.h>
#include <heed/core/random.h>
#include <heed/autograd/ops/attention/additive_score.h>
#include <heed/autograd/engine/anomaly_mode.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/linear.h>
#include <heed/autograd/ops/lstm_cell.h>
#include <heed/autograd/engine/node.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/ops/views.h>

#include <optional>

#include "helpers.h"

using namespace heed;

namespace {

// y = x, whose backward hands out the tensor G it holds (as an op that saved a gradient-sized
// tensor might): G must never be changed by the engine's summing.
Tensor pass_saved(const Tensor& x, const Tensor& G) {
  Tensor out = x.detach().clone();
  return record("pass_saved", out, {x}, [G](const Tensor&, Grads& g) { g[0] = G; });
}

}  // namespace

TEST_CASE("engine: a gradient another node holds is never summed into in place") {
  // Both orders of the two consumers, so either gradient reaches x's accumulator first.
  for (bool saved_first : {true, false}) {
    CAPTURE(saved_first);
    const Tensor x = from_vector({1, 2, 3}, {3}).requires_grad_();
    const Tensor G = from_vector({10, 20, 30}, {3});
    const Tensor a = sum(pass_saved(x, G)), b = sum(x * 3);
    const Tensor loss = saved_first ? a + b : b + a;
    loss.backward(Tensor(), /*retain_graph=*/true);
    loss.backward();  // a second pass through the same closures
    CHECK(test::allclose(G, from_vector({10, 20, 30}, {3}), 0, 0));
    CHECK(test::allclose(x.grad(), from_vector({26, 46, 66}, {3}), 0, 0));  // 2 (G + 3)
  }
}

TEST_CASE("engine: a weight used at every step sums its gradients exactly as out-of-place adds") {
  // h_t = tanh(W h_{t-1} + x_t) for 6 steps: W's six gradients meet in one buffer.
  manual_seed(7);
  const Tensor W = randn({4, 4}).requires_grad_(), h0 = randn({2, 4});
  std::vector<Tensor> xs;
  for (int t = 0; t < 6; ++t) xs.push_back(randn({2, 4}));
  Tensor h = h0;
  for (int t = 0; t < 6; ++t) h = tanh(matmul(h, W.transpose(0, 1)) + xs[t]);
  sum(h).backward();
  // The same recurrence with a separate copy of W per step: the sum of their gradients.
  std::vector<Tensor> Ws;
  Tensor h2 = h0;
  for (int t = 0; t < 6; ++t) {
    Ws.push_back(W.detach().clone().requires_grad_());
    h2 = tanh(matmul(h2, Ws.back().transpose(0, 1)) + xs[t]);
  }
  sum(h2).backward();
  Tensor total = zeros({4, 4});
  for (const Tensor& w : Ws) total = total + w.grad();
  CHECK(test::allclose(W.grad(), total, 1e-6, 1e-6));
}

TEST_CASE("engine: a leaf's first gradient is its own buffer only when no one else holds it") {
  // x's gradient is the saved G: leaf.grad must be a copy, so a second pass adding into
  // x.grad leaves G unchanged (checked above for pending sums; here for the leaf itself)
  const Tensor x = from_vector({1, 2, 3}, {3}).requires_grad_();
  const Tensor G = from_vector({10, 20, 30}, {3});
  const Tensor y = sum(pass_saved(x, G));
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  CHECK(test::allclose(G, from_vector({10, 20, 30}, {3}), 0, 0));
  CHECK(test::allclose(x.grad(), from_vector({20, 40, 60}, {3}), 0, 0));

  // The caller's seed reaches a leaf directly: copied, and the seed stays as it was.
  const Tensor w = from_vector({1, 2}, {2}).requires_grad_();
  const Tensor seed = from_vector({5, 7}, {2});
  w.backward(seed);
  w.backward(seed);
  CHECK(test::allclose(seed, from_vector({5, 7}, {2}), 0, 0));
  CHECK(test::allclose(w.grad(), from_vector({10, 14}, {2}), 0, 0));

  // a + b hands one dy to both leaves: the first to accumulate copies it (the other still
  // holds it), the second takes it; their grads must be separate buffers.
  const Tensor a = from_vector({1, 2}, {2}).requires_grad_(), b = from_vector({3, 4}, {2}).requires_grad_();
  (a + b).backward(from_vector({1, 1}, {2}));
  CHECK(a.grad().data() != b.grad().data());
  a.mutable_grad().add_(from_vector({5, 5}, {2}));
  CHECK(test::allclose(b.grad(), from_vector({1, 1}, {2}), 0, 0));

  // A gradient computed for the leaf alone (x * 3's dx) becomes leaf.grad without a copy:
  // the same values either way.
  const Tensor v = from_vector({1, 2}, {2}).requires_grad_();
  sum(v * 3).backward();
  CHECK(test::allclose(v.grad(), from_vector({3, 3}, {2}), 0, 0));
}

TEST_CASE("engine: a scalar op's backward writes over dy only when the engine alone holds it") {
  // The caller's seed and a gradient a closure saved reach `* 2` as its dy: both are held
  // by someone else, so they must come out unchanged, over two passes.
  const Tensor x = from_vector({1, 2, 3}, {3}).requires_grad_();
  const Tensor seed = from_vector({1, 10, 100}, {3}), G = from_vector({4, 5, 6}, {3});
  const Tensor y = x * 2, z = pass_saved(x * 3, G) - 1;
  y.backward(seed, /*retain_graph=*/true);
  y.backward(seed);
  z.backward(seed, /*retain_graph=*/true);
  z.backward(seed);
  CHECK(test::allclose(seed, from_vector({1, 10, 100}, {3}), 0, 0));
  CHECK(test::allclose(G, from_vector({4, 5, 6}, {3}), 0, 0));
  CHECK(test::allclose(x.grad(), from_vector({28, 70, 436}, {3}), 0, 0));  // 2 (2 seed + 3 G)

  // A chain of scalar ops: each backward writes over the gradient it was handed, so the
  // whole backward allocates a handful of blocks, not two per op (header and storage).
  Tensor w = from_vector({1, 2}, {2}).requires_grad_(), c = w;
  for (int i = 0; i < 1000; ++i) c = (-(c * real(0.5)) + 1) * real(-2);
  const int64_t before = alloc::stats().allocs;
  sum(c).backward();
  CHECK(alloc::stats().allocs - before < 50);
  CHECK(test::allclose(w.grad(), from_vector({1, 1}, {2}), 0, 0));  // (-0.5 * -2)^1000 = 1
}

TEST_CASE("engine: a reused weight's gradients are summed into one buffer (Grads::write_or_add)") {
  // A decoder-like loop: the same Linear, matmul and LSTM cell weights, and the same
  // attention memory and keys, at every step. Their gradients (gemms and kernels adding
  // into the running sum) must equal the sum of the gradients of per-step copies.
  manual_seed(11);
  const int64_t B = 3, In = 5, H = 4, S = 7, T = 6;
  const std::vector<Tensor> params = {
      randn({H, H}), randn({H}), randn({4 * H, In}), randn({4 * H, H}),  // Linear, cell
      randn({H, In}),                                                     // matmul, 2-D
      randn({B, S, H}), randn({B, S, H}), randn({H})};                    // memory, keys, v
  for (Tensor p : params) p.requires_grad_();
  std::vector<Tensor> xs;
  for (int t = 0; t < T; ++t) xs.push_back(randn({B, In}));
  // copies: a fresh leaf per parameter and step, collected in used[parameter]
  auto run = [&](bool copies, std::vector<std::vector<Tensor>>& used) {
    used.assign(params.size(), {});
    auto use = [&](size_t i) {
      if (!copies) return params[i];
      used[i].push_back(params[i].detach().clone().requires_grad_());
      return used[i].back();
    };
    Tensor h = zeros({B, H}), c = zeros({B, H}), loss = zeros({});
    for (int t = 0; t < T; ++t) {
      const Tensor e = additive_score(linear(h, use(0), use(1)).unsqueeze(1), use(6), use(7));
      const Tensor ctx = matmul(softmax(e, -1), use(5)).squeeze(1);  // (B, H)
      std::tie(h, c) = lstm_cell(xs[t] + matmul(ctx, use(4)), h, c, use(2), use(3));
      loss = loss + sum(h * h);
    }
    const int64_t before = alloc::stats().allocs;
    loss.backward();
    return alloc::stats().allocs - before;  // blocks the backward allocated
  };
  int64_t allocs[2] = {};  // the shared run's backward, anomaly mode off and on
  for (bool anomaly : {false, true}) {  // anomaly mode checks every g[i], so it never sums into
    CAPTURE(anomaly);
    for (Tensor p : params) p.set_grad(Tensor());
    std::vector<std::vector<Tensor>> shared, copies;
    {
      std::optional<DetectAnomalyGuard> guard;
      if (anomaly) guard.emplace();
      allocs[anomaly] = run(false, shared);
    }
    run(true, copies);
    for (size_t i = 0; i < params.size(); ++i) {
      CAPTURE(i);
      Tensor sum_of_copies = zeros(params[i].shape());
      for (const Tensor& w : copies[i]) sum_of_copies = sum_of_copies + w.grad();
      CHECK(test::allclose(params[i].grad(), sum_of_copies, 1e-5, 1e-5));
    }
  }
  // Summing in place saves a gradient buffer (header, storage, data) per reused operand and
  // step after the first: 6 operands x 5 steps here.
  CHECK(allocs[0] + 3 * 6 * 5 <= allocs[1]);

  // The running sum is another node's saved tensor (G): never added into, in either order.
  for (bool saved_first : {true, false}) {
    CAPTURE(saved_first);
    const Tensor W = randn({H, H}).requires_grad_(), x = randn({B, H});
    const Tensor G = full({H, H}, 2);
    const Tensor a = sum(pass_saved(W, G)), b = sum(linear(linear(x, W), W));
    const Tensor loss = saved_first ? a + b : b + a;
    loss.backward(Tensor(), /*retain_graph=*/true);
    loss.backward();
    CHECK(test::allclose(G, full({H, H}, 2), 0, 0));
  }
}
