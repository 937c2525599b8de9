// test_allocator.cpp - the caching allocator: size classes, reuse, accounting, and a
// training loop that reaches a steady state in which it allocates nothing new.
#include <atomic>
#include <cstdlib>
#include <new>

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

TEST_CASE("a long chain of ops keeps about 256 bytes per node (one node, no saved tensors)") {
  // y = y * s saves only s, so each step keeps its Node and its edge list (the outputs
  // are freed as soon as the next op consumes them); tanh also saves its output.
  Tensor x = ones({1}).requires_grad_();
  const int n = 20000;
  const AllocatorStats before = alloc::stats();
  Tensor y = x;
  for (int i = 0; i < n; ++i) y = y * real(0.999);
  const double per_mul = double(alloc::stats().live_bytes - before.live_bytes) / n;
  CHECK(per_mul < 260);
  Tensor z = x;
  const AllocatorStats mid = alloc::stats();
  for (int i = 0; i < n; ++i) z = tanh(z);
  const double per_tanh = double(alloc::stats().live_bytes - mid.live_bytes) / n;
  CHECK(per_tanh < 580);
  y.backward();
  CHECK(x.grad().item() == doctest::Approx(std::pow(0.999, n)).epsilon(1e-3));
}
