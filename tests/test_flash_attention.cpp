// test_flash_attention.cpp - the tiled kernel (autograd/ops/attention/flash_attention.h) equals its
// composed twin in outputs and in the gradients of q, k and v (float build), also when it
// reads the heads side by side or from one packed (B, T, 3E) projection, and its
// working memory is O(T d), not O(T^2): causal T = 16384, 4 heads, head dim 64.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include <heed/core/allocator.h>
#include <heed/core/cpu.h>
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attend.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/compare.h>
#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/engine/node.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/attention/ops.h>
#include "helpers.h"

using namespace heed;
using heed::nn::AttentionMask;

namespace {

// max |a - b| / (atol + rtol * |b|), <= 1 meaning close: rtol = 1e-5, and the absolute
// floor atol = rtol * max(max|b|, 1), the scale of the tensor (the inputs here are O(1)).
// The floor matters where the reference is exactly 0 and float rounding is not: at
// T = 1 the softmax is the constant 1, so dq = dk = 0, but flash's dS = P * (dP - Delta)
// subtracts two separately rounded dot products and leaves ~1e-8.
double worst_seen = 0;  // the largest mismatch of any comparison, reported per test case
double mismatch(const Tensor& a, const Tensor& b, double rtol = 1e-5) {
  REQUIRE(a.shape() == b.shape());
  double top = 1, worst = 0;
  for (int64_t i = 0; i < b.numel(); ++i) top = std::max(top, double(std::fabs(b.data()[i])));
  const double atol = rtol * top;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data()[i], y = b.data()[i];
    if (std::isnan(x) || std::isnan(y)) return INFINITY;
    worst = std::max(worst, std::fabs(x - y) / (atol + rtol * std::fabs(y)));
  }
  worst_seen = std::max(worst_seen, worst);
  return worst;
}

void report_worst(const char* what) {
  char msg[160];
  std::snprintf(msg, sizeof msg, "%s: largest mismatch %.3f (1 = the 1e-5 tolerance)", what,
                worst_seen);
  MESSAGE(msg);
  worst_seen = 0;
}

struct Run {
  Tensor out, dq, dk, dv;
};

// out = attention(q, k, v), then backward of sum(out * w).
template <class F>
Run run(const F& attention, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& w) {
  q.set_grad(Tensor()), k.set_grad(Tensor()), v.set_grad(Tensor());
  Tensor o = attention(q, k, v);
  sum(o * w).backward();
  return {o.detach(), q.grad(), k.grad(), v.grad()};
}

// Compares flash (tile sizes from `tiles`, each backward schedule) and composed on random
// q (B, H, Tq, D), k (B, H, Tk, D), v (B, H, Tk, Dv).
void compare(int64_t B, int64_t H, int64_t Tq, int64_t Tk, const AttentionMask& m,
             const FlashOptions& tiles = FlashOptions(), int64_t D = 16, int64_t Dv = 8) {
  CAPTURE(B); CAPTURE(H); CAPTURE(Tq); CAPTURE(Tk); CAPTURE(m.is_causal());
  CAPTURE(m.key_padding().defined()); CAPTURE(m.mask().defined());
  CAPTURE(tiles.rows()); CAPTURE(tiles.cols());
  Tensor q = test::param({B, H, Tq, D}), k = test::param({B, H, Tk, D});
  Tensor v = test::param({B, H, Tk, Dv}), w = randn({B, H, Tq, Dv});
  Run r = run([&](auto& a, auto& b, auto& c) { return flash_attention_composed(a, b, c, m); },
              q, k, v, w);
  for (FlashBackward schedule : {FlashBackward::by_head, FlashBackward::by_blocks}) {
    CAPTURE(int(schedule));
    const FlashOptions opt = FlashOptions(tiles).backward(schedule);
    Run f = run([&](auto& a, auto& b, auto& c) { return flash_attention(a, b, c, m, {}, opt); },
                q, k, v, w);
    CHECK(mismatch(f.out, r.out) <= 1);
    CHECK(mismatch(f.dq, r.dq) <= 1);
    CHECK(mismatch(f.dk, r.dk) <= 1);
    CHECK(mismatch(f.dv, r.dv) <= 1);
  }
}

// Key padding (B, Tk): batch 0 sees every key, batch 1 hides its first Tk/3 keys (left
// padding), so with causal its first queries see nothing: fully masked rows.
Tensor left_padding(int64_t B, int64_t Tk) {
  std::vector<int64_t> hidden(B, Tk / 3);
  hidden[0] = 0;
  return heed::test::left_padding(hidden, Tk);
}

std::vector<AttentionMask> mask_kinds(int64_t B, int64_t Tk) {
  const Tensor pad = left_padding(B, Tk);
  return {AttentionMask(), AttentionMask().key_padding(pad), AttentionMask().causal(),
          AttentionMask().key_padding(pad).causal()};
}

double mib(int64_t bytes) { return double(bytes) / (1 << 20); }
int64_t bytes(const Tensor& t) { return int64_t(alloc::size_class(t.numel() * sizeof(real))); }

}  // namespace

TEST_CASE("flash attention equals composed attention, T in {1, 7, 64, 513}, Tq = Tk") {
  manual_seed(11);
  for (int64_t T : {1, 7, 64, 513})
    for (const AttentionMask& m : mask_kinds(2, T)) compare(2, 2, T, T, m);
  report_worst("T in {1, 7, 64, 513}");
}

TEST_CASE("flash attention equals composed attention, T = 2048") {
  manual_seed(12);
  for (const AttentionMask& m : mask_kinds(2, 2048)) compare(2, 1, 2048, 2048, m);
  report_worst("T = 2048");
}

TEST_CASE("flash attention equals composed attention, Tq != Tk (causal aligns the last query)") {
  manual_seed(13);
  // Tq < Tk: a decoder continuing a cache (Tq = 1: one decoding step, whose products are
  // matrix-vector on the unpacked keys and values); Tq > Tk: the first Tq - Tk queries see nothing
  for (auto [Tq, Tk] : {std::pair<int64_t, int64_t>{7, 64}, {64, 7}, {513, 200}, {200, 513},
                        {1, 513}, {1, 1}})
    for (const AttentionMask& m : mask_kinds(2, Tk)) compare(2, 2, Tq, Tk, m);
  report_worst("Tq != Tk");
}

// Tile rows of 1 take the one-row path (forward_block's matrix-vector products) in every tile.
TEST_CASE("flash attention: odd and tiny tiles cross every tile boundary the same way") {
  manual_seed(14);
  for (auto [br, bc] : {std::pair<int64_t, int64_t>{1, 1}, {2, 3}, {3, 2}, {5, 7}, {64, 64},
                        {128, 32}})
    for (auto [Tq, Tk] : {std::pair<int64_t, int64_t>{37, 37}, {23, 37}, {37, 23}})
      for (const AttentionMask& m : mask_kinds(2, Tk))
        compare(2, 2, Tq, Tk, m, FlashOptions().rows(br).cols(bc));
  report_worst("tiny tiles");
}

// Flash attention keeps scratch per thread, sized for heed's thread count. OpenMP's own count
// may be higher: a program that uses OpenMP itself can set it (as here). Its team is asked
// for heed's count (num_threads), and heed's thread count also resets the calling thread's
// OpenMP setting (core/parallel.cpp), so either alone keeps this test passing; with neither,
// as before, threads 2 and 3 used scratch past the two sized for heed's count (SIGSEGV here).
TEST_CASE("flash attention: OpenMP's thread count above heed's does not outgrow the scratch") {
#ifdef _OPENMP
  const int before = get_num_threads();
  const bool dynamic = get_dynamic_threads();
  set_dynamic_threads(false);
  set_num_threads(2);
  omp_set_num_threads(4);  // as the program's own OpenMP code might
  manual_seed(19);
  for (const AttentionMask& m : {AttentionMask(), AttentionMask().causal()})
    compare(1, 3, 300, 300, m, FlashOptions().rows(32).cols(32));
  CHECK(get_num_threads() == 2);
  set_num_threads(before);
  set_dynamic_threads(dynamic);
  report_worst("OpenMP count above heed's");
#endif
}

TEST_CASE("flash attention: a full mask broadcast to (B, H, Tq, Tk), alone and with the rest") {
  manual_seed(15);
  const int64_t B = 2, H = 3, Tq = 45, Tk = 70;
  const Tensor per_query = gt(rand({Tq, Tk}), 0.3);         // (Tq, Tk), shared by all
  const Tensor per_head = gt(rand({H, 1, Tk}), 0.5);        // (H, 1, Tk)
  const Tensor everything = gt(rand({B, H, Tq, Tk}), 0.2);  // (B, H, Tq, Tk)
  Tensor hidden_row = ones({B, 1, Tq, Tk});                 // query 4 of batch 1 sees nothing
  for (int64_t c = 0; c < Tk; ++c) hidden_row.data()[(Tq + 4) * Tk + c] = 0;
  for (const Tensor& mk : {per_query, per_head, everything, hidden_row}) {
    compare(B, H, Tq, Tk, AttentionMask().mask(mk), FlashOptions().rows(8).cols(16));
    compare(B, H, Tq, Tk, AttentionMask().mask(mk).causal().key_padding(left_padding(B, Tk)));
  }
  report_worst("full masks");
}

TEST_CASE("flash attention: 3-D (B, T, D) inputs, a scale override, and grads only where needed") {
  manual_seed(16);
  Tensor q = test::param({3, 20, 8}), k = test::param({3, 30, 8}), v = test::param({3, 30, 5});
  const AttentionMask m = AttentionMask().causal().key_padding(left_padding(3, 30));
  const Tensor wq = randn({3, 20, 5});
  Tensor f = flash_attention(q, k, v, m, 0.3, FlashOptions().rows(4).cols(6));
  CHECK(f.shape() == Shape{3, 20, 5});
  Tensor r = nn::attend("ref", matmul(q, k.transpose(1, 2)) * 0.3, v, m).context;
  CHECK(mismatch(f, r) <= 1);

  // only v needs grad: q and k get nothing, v's gradient still matches
  Tensor v2 = v.detach().requires_grad_();
  sum(flash_attention_composed(q.detach(), k.detach(), v2, m) * wq).backward();
  for (FlashBackward schedule : {FlashBackward::by_head, FlashBackward::by_blocks}) {
    Tensor v1 = v.detach().requires_grad_();
    const FlashOptions opt = FlashOptions().backward(schedule);
    sum(flash_attention(q.detach(), k.detach(), v1, m, {}, opt) * wq).backward();
    CHECK(mismatch(v1.grad(), v2.grad()) <= 1);
  }
  CHECK_FALSE(q.grad().defined());
  {
    NoGradGuard no_grad;
    CHECK_FALSE(flash_attention(q, k, v).requires_grad());
  }
}

TEST_CASE("flash attention: every key padded gives zero output and zero gradients, never NaN") {
  const Shape shape = {2, 2, 9, 4};
  Tensor q = test::param(shape), k = test::param(shape), v = test::param(shape);
  Tensor pad = ones({2, 9});
  for (int64_t j = 0; j < 9; ++j) pad.data()[9 + j] = 0;  // batch 1 sees no key at all
  Tensor o = flash_attention(q, k, v, AttentionMask().key_padding(pad), {},
                             FlashOptions().rows(2).cols(4));
  sum(o * o + o).backward();
  for (const Tensor& t : {o, q.grad(), k.grad(), v.grad()}) {
    for (int64_t i = 0; i < t.numel(); ++i) REQUIRE(std::isfinite(t.data()[i]));
    for (int64_t i = t.numel() / 2; i < t.numel(); ++i) CHECK(t.data()[i] == 0);  // batch 1
  }
}

namespace {

// (B, T, H*D) -> (B, H, T, D) and back: the copies flash_attention_heads and
// flash_attention_packed avoid, used here to build their reference.
Tensor split_heads(const Tensor& x, int64_t H) {
  return x.reshape({x.size(0), x.size(1), H, x.size(2) / H}).permute({0, 2, 1, 3});
}
Tensor merge(const Tensor& x) {
  return x.permute({0, 2, 1, 3}).reshape({x.size(0), x.size(2), x.size(1) * x.size(3)});
}

}  // namespace

TEST_CASE("flash attention reads heads side by side and from one packed projection in place") {
  manual_seed(17);
  const int64_t B = 2, H = 3, D = 8, Dv = 5, E = H * D;
  for (auto [br, bc] : {std::pair<int64_t, int64_t>{2, 3}, {128, 64}})
    for (FlashBackward schedule : {FlashBackward::by_head, FlashBackward::by_blocks}) {
      const FlashOptions opt = FlashOptions().rows(br).cols(bc).backward(schedule);
      CAPTURE(br); CAPTURE(bc); CAPTURE(int(schedule));
      // side by side: q (B, Tq, H*D), k (B, Tk, H*D), v (B, Tk, H*Dv), Tq != Tk
      for (auto [Tq, Tk] : {std::pair<int64_t, int64_t>{1, 1}, {37, 37}, {23, 37}, {37, 23}})
        for (const AttentionMask& m : mask_kinds(B, Tk)) {
          CAPTURE(Tq); CAPTURE(Tk); CAPTURE(m.is_causal()); CAPTURE(m.key_padding().defined());
          Tensor q = test::param({B, Tq, H * D}), k = test::param({B, Tk, H * D});
          Tensor v = test::param({B, Tk, H * Dv}), w = randn({B, Tq, H * Dv});
          Run r = run([&](auto& a, auto& b, auto& c) {
            return merge(flash_attention_composed(split_heads(a, H), split_heads(b, H), split_heads(c, H), m));
          }, q, k, v, w);
          Run f = run([&](auto& a, auto& b, auto& c) {
            return flash_attention_heads(a, b, c, H, m, {}, opt);
          }, q, k, v, w);
          CHECK(mismatch(f.out, r.out) <= 1);
          CHECK(mismatch(f.dq, r.dq) <= 1);
          CHECK(mismatch(f.dk, r.dk) <= 1);
          CHECK(mismatch(f.dv, r.dv) <= 1);
        }
      // packed: qkv (B, T, 3E), Q K V its column blocks; one gradient (B, T, 3E)
      for (int64_t T : {1, 37})
        for (const AttentionMask& m : mask_kinds(B, T)) {
          CAPTURE(T); CAPTURE(m.is_causal()); CAPTURE(m.key_padding().defined());
          Tensor qkv = test::param({B, T, 3 * E}), w = randn({B, T, E});
          Tensor r = merge(flash_attention_composed(split_heads(narrow(qkv, 2, 0, E), H),
                                                    split_heads(narrow(qkv, 2, E, E), H),
                                                    split_heads(narrow(qkv, 2, 2 * E, E), H), m));
          sum(r * w).backward();
          const Tensor r_grad = qkv.grad();
          qkv.set_grad(Tensor());
          Tensor f = flash_attention_packed(qkv, H, m, {}, opt);
          sum(f * w).backward();
          CHECK(mismatch(f.detach(), r.detach()) <= 1);
          CHECK(mismatch(qkv.grad(), r_grad) <= 1);
        }
      // packed keys and values: q (B, Tq, E), kv (B, Tk, 2E), Tq != Tk
      for (auto [Tq, Tk] : {std::pair<int64_t, int64_t>{23, 37}, {37, 23}})
        for (const AttentionMask& m : mask_kinds(B, Tk)) {
          CAPTURE(Tq); CAPTURE(Tk); CAPTURE(m.is_causal()); CAPTURE(m.key_padding().defined());
          Tensor q = test::param({B, Tq, E}), kv = test::param({B, Tk, 2 * E});
          Tensor w = randn({B, Tq, E});
          Tensor r = merge(flash_attention_composed(split_heads(q, H), split_heads(narrow(kv, 2, 0, E), H),
                                                    split_heads(narrow(kv, 2, E, E), H), m));
          sum(r * w).backward();
          const Tensor rq = q.grad(), rkv = kv.grad();
          q.set_grad(Tensor()), kv.set_grad(Tensor());
          Tensor f = flash_attention_packed(q, kv, H, m, {}, opt);
          sum(f * w).backward();
          CHECK(mismatch(f.detach(), r.detach()) <= 1);
          CHECK(mismatch(q.grad(), rq) <= 1);
          CHECK(mismatch(kv.grad(), rkv) <= 1);
        }
    }
  report_worst("heads side by side, packed");
}

TEST_CASE("flash attention rejects shapes and masks that do not fit, naming itself") {
  Tensor q = randn({2, 3, 5, 4}), k = randn({2, 3, 6, 4}), v = randn({2, 3, 6, 7});
  CHECK_THROWS_WITH_AS(flash_attention(q, randn({2, 3, 6, 3}), v),
                       doctest::Contains("flash_attention"), Error);
  CHECK_THROWS_AS(flash_attention(q, k, randn({2, 3, 5, 7})), Error);
  CHECK_THROWS_AS(flash_attention(q.reshape({6, 5, 4}), k, v), Error);
  CHECK_THROWS_AS(flash_attention(q, k, v, AttentionMask().key_padding(ones({2, 5}))), Error);
  CHECK_THROWS_AS(flash_attention(q, k, v, AttentionMask().mask(ones({5, 5}))), Error);
  CHECK_THROWS_AS(flash_attention(q, k, v, {}, {}, FlashOptions().rows(0)), Error);
  CHECK(flash_attention(q, k, v).shape() == Shape{2, 3, 5, 7});
  // heads side by side: widths must split into H heads, k and v share Tk
  Tensor qs = randn({2, 5, 12}), ks = randn({2, 6, 12}), vs = randn({2, 6, 9});
  CHECK(flash_attention_heads(qs, ks, vs, 3).shape() == Shape{2, 5, 9});
  CHECK_THROWS_WITH_AS(flash_attention_heads(qs, ks, vs, 2), doctest::Contains("flash_attention_heads"),
                       Error);
  CHECK_THROWS_AS(flash_attention_heads(qs, ks, randn({2, 5, 9}), 3), Error);
  CHECK_THROWS_AS(flash_attention_heads(qs, randn({2, 6, 9}), vs, 3), Error);
  CHECK_THROWS_AS(flash_attention_heads(qs, ks, vs, 0), Error);
  CHECK_THROWS_AS(flash_attention_heads(qs, ks, vs, 3, AttentionMask().key_padding(ones({2, 5}))),
                  Error);
  // packed: the width must be 3 * H * D
  CHECK(flash_attention_packed(randn({2, 5, 18}), 3).shape() == Shape{2, 5, 6});
  CHECK_THROWS_WITH_AS(flash_attention_packed(randn({2, 5, 18}), 4),
                       doctest::Contains("flash_attention_packed"), Error);
  CHECK_THROWS_AS(flash_attention_packed(randn({2, 5, 3, 6}), 3), Error);
  CHECK(flash_attention_packed(randn({2, 5, 6}), randn({2, 4, 12}), 3).shape() == Shape{2, 5, 6});
  CHECK_THROWS_WITH_AS(flash_attention_packed(randn({2, 5, 6}), randn({2, 4, 6}), 3),
                       doctest::Contains("flash_attention_packed"), Error);
}

// Causal flash attention at T = 16384, 4 heads, head dim 64, forward and backward, must
// run in under 64 MiB of working memory beyond q, k, v, the output and their
// gradients. Peak of the allocator's live bytes, minus those tensors (and dO, which is
// the output's gradient). The op's own share is measured too, by calling its backward
// node directly: the rest is autograd's, which copies a gradient into a leaf's .grad
// (AccumulateGrad in autograd/engine/engine.cpp) while the op's gradient is still alive.
TEST_CASE("flash attention: causal T = 16384, 4 heads, head dim 64 in O(T d) memory") {
  manual_seed(17);
  const int64_t T = 16384, H = 4, D = 64;
  const Shape shape = {1, H, T, D};
  Tensor q = test::param(shape), k = test::param(shape), v = test::param(shape);
  Tensor dO = randn({1, H, T, D});  // dL/dO, the seed of backward
  const int64_t one = bytes(q);     // O, dO and each gradient are the size of q
  using clock = std::chrono::steady_clock;
  auto seconds = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };

  alloc::reset_peak_bytes();
  const int64_t before = alloc::stats().live_bytes;  // q, k, v, dO and whatever else lives
  const auto t0 = clock::now();
  Tensor o = flash_attention(q, k, v, AttentionMask().causal());
  const auto t1 = clock::now();
  const int64_t op_forward = alloc::stats().peak_bytes - before - one;  // beyond O

  int64_t op_backward = 0;  // the node alone, beyond the 3 gradients it returns
  {
    const std::shared_ptr<Node>& node = o.grad_fn();
    TensorVec slots(3);
    Grads grads(node->next, slots);
    alloc::reset_peak_bytes();
    const int64_t live = alloc::stats().live_bytes;
    node->apply(dO, grads);
    op_backward = alloc::stats().peak_bytes - live - 3 * one;
  }

  alloc::reset_peak_bytes();
  const auto t2 = clock::now();
  o.backward(dO);
  const auto t3 = clock::now();
  const int64_t working = alloc::stats().peak_bytes - before - 4 * one;  // O and 3 grads
  char msg[600];
  std::snprintf(msg, sizeof msg,
                "flash causal T=%lld H=%lld D=%lld, %d threads: forward %.2f s, backward %.2f s "
                "(%s).\n"
                "  working memory at peak, beyond q, k, v, O, dO and the 3 gradients (%.0f MiB "
                "each): %.2f MiB (limit 64)\n"
                "  of which the op's own: forward %.2f MiB, backward %.2f MiB (tiles, packed key blocks, L, Delta); "
                "the rest is autograd copying a gradient into .grad",
                (long long)T, (long long)H, (long long)D, get_num_threads(), seconds(t0, t1),
                seconds(t2, t3), H % get_num_threads() == 0 ? "by_head" : "by_blocks", mib(one),
                mib(working), mib(op_forward), mib(op_backward));
  MESSAGE(msg);
  CHECK(working < 64 * (1 << 20));
  CHECK(op_forward < 2 * (1 << 20));
  CHECK(op_backward < 2 * (1 << 20));
  for (const Tensor& t : {o, q.grad(), k.grad(), v.grad()})
    for (int64_t i = 0; i < t.numel(); i += 997) REQUIRE(std::isfinite(t.data()[i]));
}

TEST_CASE("flash attention vs composed: O(T d) vs O(T^2) memory and time at T = 2048") {
  manual_seed(18);
  const int64_t T = 2048, H = 4, D = 64;
  const Shape shape = {1, H, T, D};
  Tensor q = test::param(shape), k = test::param(shape), v = test::param(shape);
  Tensor dO = randn({1, H, T, D});
  const AttentionMask m = AttentionMask().causal();
  auto measure = [&](const char* name, auto attention) {
    q.set_grad(Tensor()), k.set_grad(Tensor()), v.set_grad(Tensor());
    alloc::reset_peak_bytes();
    const int64_t before = alloc::stats().live_bytes;
    const auto t0 = std::chrono::steady_clock::now();
    attention().backward(dO);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int64_t working = alloc::stats().peak_bytes - before - 4 * bytes(q);
    char msg[240];
    std::snprintf(msg, sizeof msg, "%-8s causal T=%lld H=%lld D=%lld forward+backward %.3f s, "
                  "working memory %.1f MiB (beyond q, k, v, O, dO, grads)", name, (long long)T,
                  (long long)H, (long long)D, s, mib(working));
    MESSAGE(msg);
    return working;
  };
  const int64_t flash = measure("flash", [&] { return flash_attention(q, k, v, m); });
  const int64_t composed =
      measure("composed", [&] { return flash_attention_composed(q, k, v, m); });
  CHECK(composed > 16 * flash);  // the (H, T, T) scores alone are 64 MiB here
}
