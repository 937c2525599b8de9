// test_allocator.cpp - the caching allocator: size classes, reuse, accounting, and a
// training loop that reaches a steady state in which it allocates nothing new.
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include <heed/core/allocator.h>
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;

// Count every C++ heap allocation in this test binary, to prove the steady state
// uses neither the system allocator for tensors nor operator new for graph bookkeeping.
static std::atomic<long> g_new_calls{0};
void* operator new(std::size_t n) {
  g_new_calls++;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

TEST_CASE("size classes: 64-byte granules, then four per power of two") {
  CHECK(alloc::size_class(1) == 64);
  CHECK(alloc::size_class(64) == 64);
  CHECK(alloc::size_class(65) == 128);
  CHECK(alloc::size_class(1024) == 1024);
  CHECK(alloc::size_class(1025) == 1280);
  CHECK(alloc::size_class(4096) == 4096);
  CHECK(alloc::size_class(4097) == 5120);
  for (std::size_t b = 1; b < 100000; b = b * 3 + 1) {
    CHECK(alloc::size_class(b) >= b);
    CHECK(alloc::size_class(b) <= b + b / 4 + 64);
  }
}

TEST_CASE("freed blocks are reused and live/peak bytes are tracked") {
  const AllocatorStats s0 = alloc::stats();
  { Tensor t = zeros({1000}); }
  const AllocatorStats s1 = alloc::stats();
  { Tensor t = zeros({1000}); }
  const AllocatorStats s2 = alloc::stats();
  CHECK(s2.system_allocs == s1.system_allocs);  // second buffer came from the cache
  CHECK(s2.live_bytes == s0.live_bytes);
  alloc::reset_peak_bytes();
  const int64_t before = alloc::stats().live_bytes;
  {
    Tensor big = empty({1 << 20});  // 4 MiB in float
    CHECK(alloc::stats().live_bytes - before >= int64_t(sizeof(real)) << 20);
  }
  CHECK(alloc::stats().live_bytes == before);
  CHECK(alloc::stats().peak_bytes - before >= int64_t(sizeof(real)) << 20);
}

TEST_CASE("a repeated training step allocates nothing new") {
  manual_seed(0);
  Tensor x = randn({64, 16});
  Tensor y = randn({64, 4});
  Tensor w1 = randn({16, 32}).requires_grad_(), b1 = zeros({32}).requires_grad_();
  Tensor w2 = randn({32, 4}).requires_grad_(), b2 = zeros({4}).requires_grad_();
  auto step = [&] {
    Tensor h = tanh(matmul(x, w1) + b1);
    Tensor loss = mean(pow(matmul(h, w2) + b2 - y, 2));
    for (Tensor* p : {&w1, &b1, &w2, &b2}) p->zero_grad();
    loss.backward();
    NoGradGuard ng;
    for (Tensor* p : {&w1, &b1, &w2, &b2}) p->add_(p->grad(), -0.01);
  };
  for (int i = 0; i < 3; ++i) step();  // warm-up fills the cache
  const AllocatorStats before = alloc::stats();
  const long new_before = g_new_calls.load();
  for (int i = 0; i < 20; ++i) step();
  const long new_calls = g_new_calls.load() - new_before;
  const AllocatorStats after = alloc::stats();
  CHECK(after.system_allocs == before.system_allocs);  // no new blocks from the system
  CHECK(after.allocs > before.allocs);                 // (the cache was really used)
  CHECK(after.live_bytes == before.live_bytes);        // nothing leaks across steps
  CHECK(new_calls == 0);                               // no operator new for bookkeeping
}

TEST_CASE("a long chain of ops keeps about 192 bytes per node (one node, no saved tensors)") {
  // y = y * s saves only s, so each step keeps its Node, with its edge inside it (the
  // outputs are freed as soon as the next op consumes them); tanh also saves its output.
  Tensor x = ones({1}).requires_grad_();
  const int n = 20000;
  const AllocatorStats before = alloc::stats();
  Tensor y = x;
  for (int i = 0; i < n; ++i) y = y * real(0.999);
  const double per_mul = double(alloc::stats().live_bytes - before.live_bytes) / n;
  CHECK(per_mul < 200);
  Tensor z = x;
  const AllocatorStats mid = alloc::stats();
  for (int i = 0; i < n; ++i) z = tanh(z);
  const double per_tanh = double(alloc::stats().live_bytes - mid.live_bytes) / n;
  CHECK(per_tanh < 520);
  y.backward();
  CHECK(x.grad().item() == doctest::Approx(std::pow(0.999, n)).epsilon(1e-3));
}

// ---- the per-thread fast path for small blocks (core/allocator.cpp)

TEST_CASE("small blocks freed on another thread come back into use, and the counts stay exact") {
  constexpr int n = 5000;  // more than a thread keeps, so blocks go back to the shared lists
  const int64_t cls = int64_t(alloc::size_class(100));  // 128
  const int64_t live0 = alloc::stats().live_bytes;
  auto round = [&] {
    std::vector<void*> blocks(n);
    std::thread producer([&] { for (void*& p : blocks) p = alloc::allocate(100); });
    producer.join();  // its thread cache is gone; its blocks are still live
    const AllocatorStats held = alloc::stats();
    CHECK(held.live_bytes - live0 == n * cls);
    for (void* p : blocks) alloc::deallocate(p, 100);  // freed on this thread
    CHECK(alloc::stats().live_bytes == live0);
    CHECK(alloc::stats().cached_bytes - held.cached_bytes == n * cls);
  };
  round();
  round();
  const AllocatorStats before = alloc::stats();
  for (int i = 0; i < 10; ++i) round();
  const AllocatorStats after = alloc::stats();
  CHECK(after.allocs - before.allocs == 10 * n);
  // Each producer reused the blocks this thread freed: without that, the 10 rounds would
  // have cut 10 * 5000 * 128 bytes (about 100 slabs of 64 KiB) from the system.
  CHECK(after.system_allocs - before.system_allocs <= 1);
}

TEST_CASE("peak bytes add up blocks held by different threads") {
  constexpr int n = 1000;
  const int64_t cls = int64_t(alloc::size_class(200));  // 256
  const AllocatorStats before = alloc::stats();
  std::vector<void*> a(n), b(n);
  {
    alloc::PeakScope scope;
    std::thread t1([&] { for (void*& p : a) p = alloc::allocate(200); });
    t1.join();
    std::thread t2([&] { for (void*& p : b) p = alloc::allocate(200); });
    t2.join();
    CHECK(scope.bytes() == 2 * n * cls);  // both threads' blocks, live at once
    for (void* p : a) alloc::deallocate(p, 200);
    for (void* p : b) alloc::deallocate(p, 200);
    CHECK(scope.bytes() == 2 * n * cls);
  }
  const AllocatorStats after = alloc::stats();
  CHECK(after.live_bytes == before.live_bytes);
  CHECK(after.allocs - before.allocs == 2 * n);
}

TEST_CASE("threads allocating and freeing each other's blocks at once leave nothing live") {
  // Run under `make sanitize` too: ASan checks every block is handed to one owner at a time.
  const int64_t live0 = alloc::stats().live_bytes;
  std::mutex mu;
  std::vector<std::pair<void*, std::size_t>> handoff;  // allocated by one thread, freed by another
  auto work = [&](int seed) {
    std::vector<std::pair<void*, std::size_t>> mine;
    for (int i = 0; i < 20000; ++i) {
      const std::size_t bytes = 1 + std::size_t(seed * 7919 + i * 104729) % 1500;  // small and large
      void* p = alloc::allocate(bytes);
      static_cast<unsigned char*>(p)[bytes - 1] = 1;  // ASan: the block is ours to write
      if (i % 3 == 0) {
        std::lock_guard<std::mutex> lock(mu);
        handoff.emplace_back(p, bytes);
      } else {
        mine.emplace_back(p, bytes);
      }
      if (i % 5 == 0) {
        std::pair<void*, std::size_t> q{nullptr, 0};
        {
          std::lock_guard<std::mutex> lock(mu);
          if (!handoff.empty()) { q = handoff.back(); handoff.pop_back(); }
        }
        if (q.first) alloc::deallocate(q.first, q.second);
      }
      if (mine.size() > 100) {
        alloc::deallocate(mine.front().first, mine.front().second);
        mine.erase(mine.begin());
      }
    }
    for (auto [p, bytes] : mine) alloc::deallocate(p, bytes);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(work, t);
  for (std::thread& t : threads) t.join();
  for (auto [p, bytes] : handoff) alloc::deallocate(p, bytes);
  CHECK(alloc::stats().live_bytes == live0);
}
