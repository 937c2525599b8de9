// test_threads.cpp - what may be used from several threads of the caller's own (README,
// "Reliability"): independent models, each trained on its own thread, give the same bits as
// trained one after the other. The allocator (one locked cache), grad mode (per thread) and
// graphs (owned by their tensors) are safe to share that way; the random generator is one
// locked global whose stream the threads would share in a timing-dependent order, so the
// models here are initialised before the threads start and use no dropout. Below: one model
// used for inference by several threads, and backward passes into shared parameters and
// through one shared graph.
#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/loss.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/layers/activation.h>
#include <heed/layers/linear.h>
#include <heed/layers/loss.h>
#include <heed/layers/attention/rope.h>
#include <heed/layers/sequential.h>
#include <heed/optim/adam.h>
#include "helpers.h"

using namespace heed;

namespace {

struct Job {
  nn::Sequential model{nullptr};
  Tensor x, y;  // (N, 16) inputs, (N, 4) targets
};

Job make_job(uint64_t seed) {
  manual_seed(seed);
  Job j;
  j.model = nn::Sequential(nn::Linear(16, 64),
                                             nn::Tanh(),
                                             nn::Linear(64, 4));
  j.x = randn({256, 16});
  j.y = randn({256, 4});
  return j;
}

// 40 Adam steps; returns the parameters, flat.
std::vector<real> train(Job& j) {
  optim::Adam opt(j.model->parameters(), optim::AdamOptions(1e-2));
  for (int s = 0; s < 40; ++s) {
    Tensor loss = nn::functional::mse_loss(j.model->forward(j.x), j.y);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  std::vector<real> flat;
  for (const Tensor& p : j.model->parameters()) {
    const std::vector<real> v = p.to_vector();
    flat.insert(flat.end(), v.begin(), v.end());
  }
  return flat;
}

}  // namespace

TEST_CASE("threads: independent models trained on separate threads match sequential training") {
  const int prev = get_num_threads();
  const bool prev_dynamic = get_dynamic_threads();
  set_dynamic_threads(false);
  set_num_threads(1);
  std::vector<std::vector<real>> sequential;
  for (uint64_t seed : {11, 12, 13}) {
    Job j = make_job(seed);
    sequential.push_back(train(j));
  }
  std::vector<Job> jobs;
  for (uint64_t seed : {11, 12, 13}) jobs.push_back(make_job(seed));
  std::vector<std::vector<real>> concurrent(jobs.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < jobs.size(); ++i)
    threads.emplace_back([&, i] { concurrent[i] = train(jobs[i]); });
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < jobs.size(); ++i) CHECK(concurrent[i] == sequential[i]);
  set_num_threads(prev);
  set_dynamic_threads(prev_dynamic);
}

TEST_CASE("threads: grad mode is per thread") {
  Tensor w = ones({3}).requires_grad_();
  NoGradGuard off;  // this thread only
  bool other_records = false;
  std::thread t([&] { other_records = (w * 2).requires_grad(); });
  t.join();
  CHECK(other_records);
  CHECK_FALSE((w * 2).requires_grad());
}

// Inference on one shared model from several threads, as libtorch allows: RotaryEmbedding
// grows its cos/sin cache inside forward. Unguarded, a thread could read a table another had
// just replaced and freed. Each thread decodes step by step, so the cache keeps growing under
// them; but the window is short, and without the lock this test fails only when the timing
// hits it (under `make sanitize` as a use after free): a smoke test, not a proof.
TEST_CASE("threads: one RotaryEmbedding's forward from several threads at once, cache growing") {
  for (int round = 0; round < 20; ++round) {
    CAPTURE(round);
    nn::RotaryEmbedding rope(nn::RotaryEmbeddingOptions(8).base(100));
    const Tensor x = randn({1, 2, 1, 8});  // one new token of 2 heads
    NoGradGuard no_grad;
    std::vector<int> wrong(3, 0);
    std::vector<std::thread> threads;
    for (int th = 0; th < 3; ++th)
      threads.emplace_back([&, th] {
        for (int64_t offset = 0; offset < 200; ++offset)
          wrong[th] += !test::allclose(rope->forward(x, offset), nn::apply_rotary(x, offset, 100), 0, 0);
      });
    for (std::thread& t : threads) t.join();
    CHECK(wrong == std::vector<int>(3, 0));
  }
}

// Two threads recording ops on the same parameters and running backward into them at once
// (Hogwild-style, or two micro-batches on two threads): every contribution lands. The
// gradients are whole numbers, so any order sums exactly, and a lost update shows.
TEST_CASE("threads: backward passes on two threads into the same parameters lose nothing") {
  const int steps = 300;
  for (int round = 0; round < 20; ++round) {
    CAPTURE(round);
    Tensor w = ones({256}).requires_grad_();  // a fresh leaf: its one accumulator made under race
    Tensor b = zeros({1}).requires_grad_();
    std::vector<std::thread> threads;
    for (int th = 0; th < 2; ++th)
      threads.emplace_back([&] {
        const Tensor x = full({256}, 3);
        for (int s = 0; s < steps; ++s) sum(w * x + b).backward();  // dw = 3, db = 256
      });
    for (std::thread& t : threads) t.join();
    const std::vector<real> gw = w.grad().to_vector();
    CHECK(std::count(gw.begin(), gw.end(), real(3 * 2 * steps)) == 256);
    CHECK(b.grad().item() == real(256 * 2 * steps));
  }
}

// Passes on two threads at once through one graph's intermediate nodes (retain_graph): each
// pass counts and sums in its own state (autograd/engine/engine.cpp, GraphTask), so neither sees the
// other's counts. Were that state kept in the shared nodes, a pass would find a node's count
// already taken, run it twice or never, and gradients would be lost or doubled (and
// ThreadSanitizer, `make tsan`, would report the race). Whole numbers: any order sums exactly.
TEST_CASE("threads: backward passes on two threads through one shared graph (retain_graph)") {
  const int steps = 200;
  for (int round = 0; round < 10; ++round) {
    CAPTURE(round);
    Tensor x = ones({64}).requires_grad_();
    const Tensor h = x * x + x * 2;  // shared: three nodes, x's accumulator reached twice
    std::vector<Tensor> a = {full({64}, 1).requires_grad_(), full({64}, 2).requires_grad_()};
    std::vector<std::thread> threads;
    for (int th = 0; th < 2; ++th)
      threads.emplace_back([&, th] {
        for (int s = 0; s < steps; ++s) sum(h * a[th]).backward(Tensor(), true);
      });
    for (std::thread& t : threads) t.join();
    // dL/dx = a (2x + 2) = 4a; dL/da = h = 3
    const std::vector<real> gx = x.grad().to_vector();
    CHECK(std::count(gx.begin(), gx.end(), real(4 * (1 + 2) * steps)) == 64);
    for (const Tensor& ai : a) {
      const std::vector<real> ga = ai.grad().to_vector();
      CHECK(std::count(ga.begin(), ga.end(), real(3 * steps)) == 64);
    }
  }
}

// A hook list is read by the engine and written by register/remove under the leaf's lock:
// one thread adds and removes hooks while another runs backward passes through the leaf.
// Every pass sees the counting hook (registered before the threads start) exactly once.
TEST_CASE("threads: hooks registered and removed while another thread's backward runs") {
  Tensor w = from_vector({1, 2, 3}, {3}).requires_grad_();
  std::atomic<int> counted{0};
  w.register_post_accumulate_grad_hook([&](const Tensor&) { ++counted; });
  constexpr int kPasses = 300;
  std::thread trainer([&] {
    for (int i = 0; i < kPasses; ++i) sum(w * w).backward();
  });
  std::thread registrar([&] {
    for (int i = 0; i < kPasses; ++i)
      w.remove_post_accumulate_grad_hook(w.register_post_accumulate_grad_hook([](const Tensor&) {}));
  });
  trainer.join();
  registrar.join();
  CHECK(counted == kPasses);
  std::vector<real> want;  // kPasses passes of dL/dw = 2w
  for (real x : {1, 2, 3}) want.push_back(real(2 * kPasses) * x);
  CHECK(w.grad().to_vector() == want);
}
