// test_denormals.cpp - flushing denormals to zero (core/denormals.h): off by default; on,
// a denormal product is 0 on every thread of a parallel kernel and a denormal input reads
// as 0; off again, both are kept; attention's results do not move beyond denormal amounts.
// No timing here: the speed of underflowing attention is measured by `make bench`
// (tests/bench/bench_denormals.cpp).
#include <heed/core/denormals.h>
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/attention/ops.h>

#include <cfloat>
#include <vector>

#include "helpers.h"

using namespace heed;

namespace {

// Restores the thread settings and turns flushing off at the end of a test.
struct ThreadsAndFlush {
  int threads = get_num_threads();
  bool dynamic = get_dynamic_threads();
  ~ThreadsAndFlush() {
    set_flush_denormals(false);
    set_num_threads(threads);
    set_dynamic_threads(dynamic);
  }
};

// Counts of elements of t that are 0 and that are denormal (nonzero, below FLT_MIN).
std::pair<int64_t, int64_t> zeros_and_denormals(const Tensor& t) {
  int64_t z = 0, d = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float x = float(t.data()[i]);
    z += x == 0;
    d += x != 0 && std::fabs(x) < FLT_MIN;
  }
  return {z, d};
}

}  // namespace

TEST_CASE("denormals: kept by default, as in PyTorch") {
  CHECK_FALSE(get_flush_denormals());
  const Tensor a = full({4}, real(1e-20));
  CHECK(zeros_and_denormals(a * a).second == 4);  // 1e-40 is a float denormal
}

TEST_CASE("denormals: flushing on makes a denormal product 0 on every thread of a parallel kernel") {
  ThreadsAndFlush restore;
  set_dynamic_threads(false);
  set_num_threads(2);
  const int64_t n = 8 * kGrainElementwise;  // large enough that mul runs on both threads
  const Tensor a = full({n}, real(1e-20)), b = full({n}, real(1e-20));
  REQUIRE(set_flush_denormals(true));
  CHECK(get_flush_denormals());
#ifdef _OPENMP
  int flushing = 0;
#pragma omp parallel num_threads(2) reduction(+ : flushing)
  flushing += get_flush_denormals();
  CHECK(flushing == 2);
  // A larger team than before: its new workers copy the mode of the thread that creates them.
  set_num_threads(3);
  flushing = 0;
#pragma omp parallel num_threads(3) reduction(+ : flushing)
  flushing += get_flush_denormals();
  CHECK(flushing == 3);
  set_num_threads(2);
#endif
  const Tensor flushed = a * b;  // (n) 1e-40 each, flushed
  CHECK(zeros_and_denormals(flushed).first == n);
  // DAZ: a denormal input is read as zero, so 1e-40 * 1e10 is 0, not 1e-30.
  set_flush_denormals(false);
  const Tensor tiny = a * b;  // (n) 1e-40 each, kept
  CHECK(zeros_and_denormals(tiny).second == n);
  set_flush_denormals(true);
  CHECK(zeros_and_denormals(tiny * real(1e10)).first == n);
  set_flush_denormals(false);
  CHECK_FALSE(get_flush_denormals());
  const auto kept = zeros_and_denormals(tiny * real(1e10));
  CHECK(kept.first == 0);
}

TEST_CASE("denormals: attention on underflowing inputs gives the same answers flushed or not") {
  ThreadsAndFlush restore;
  manual_seed(3);
  const int64_t B = 1, H = 2, T = 64, D = 16;
  // Scores with a spread of ~160 put exp(s - max) of many keys in the denormal range.
  const Tensor q = randn({B, H, T, D}) * real(40), k = randn({B, H, T, D}), v = randn({B, H, T, D});
  const Tensor dO = randn({B, H, T, D});
  const Tensor p = softmax(matmul(q, k.transpose(-2, -1)) * real(0.25), -1);  // (B, H, T, T)
  REQUIRE(zeros_and_denormals(p).second > 0);
  auto run = [&](bool flush) {
    set_flush_denormals(flush);
    Tensor qq = q.detach().requires_grad_(), kk = k.detach().requires_grad_(), vv = v.detach().requires_grad_();
    Tensor o = flash_attention(qq, kk, vv, nn::AttentionMask());  // (B, H, T, D)
    o.backward(dO);
    std::vector<Tensor> out = {o.detach(), qq.grad(), kk.grad(), vv.grad()};
    set_flush_denormals(false);
    return out;
  };
  const std::vector<Tensor> kept = run(false), flushed = run(true);
  for (size_t i = 0; i < kept.size(); ++i) {
    CAPTURE(i);
    const double diff = max(abs(kept[i] - flushed[i])).item(), scale = max(abs(kept[i])).item();
    CHECK(diff <= 1e-6 * scale);
  }
}
