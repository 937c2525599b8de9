// test_bf16_cache.cpp - the ways "medium" avoids rounding an operand twice (core/blas.h's
// Bf16Inputs and Bf16Matrix, core/bf16_cache.h's parameter copies) give the same bits as
// gemm() rounding every operand at every call; the cache's hits, misses and drops.
#include <thread>
#include <type_traits>
#include <cstring>
#include <tuple>
#include <vector>

#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/linear.h>
#include <heed/autograd/ops/lstm_cell.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/core/random.h>
#include <heed/core/bf16_cache.h>
#include <heed/core/blas.h>
#include <heed/core/gemm_engine.h>
#include <heed/core/onednn_matmul.h>
#include <heed/core/matmul_precision.h>
#include <heed/layers/init.h>
#include <heed/layers/linear.h>
#include <heed/optim/sgd.h>
#include "gemm_engine_scope.h"
#include "helpers.h"

using namespace heed;

using heed::test::random_buffer;

namespace {
// src (rows, cols) with leading dim ld, rounded into a compact copy: the layout gemm's own
// copies have (BLAS may sum in another order for another leading dim: gemv with a strided x)
std::vector<real> compact_rounded(const std::vector<real>& src, int64_t ld, int64_t rows, int64_t cols) {
  std::vector<real> v(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) v[r * cols + c] = round_to_bf16(src[r * ld + c]);
  return v;
}

bool same_bits(const real* a, const real* b, int64_t n) {
  return std::memcmp(a, b, std::size_t(n) * sizeof(real)) == 0;
}
}  // namespace

// Both own a block: copying is refused at compile time (bf16_cache.h, blas.h).
static_assert(!std::is_copy_constructible_v<Bf16Copy> && !std::is_copy_assignable_v<Bf16Copy>);
static_assert(!std::is_copy_constructible_v<Bf16Matrix> && !std::is_copy_assignable_v<Bf16Matrix>);
static_assert(!std::is_copy_constructible_v<Bf16CacheScope> && !std::is_copy_assignable_v<Bf16CacheScope>);

TEST_CASE("gemm under medium with an operand passed as rounded == gemm rounding it, bit for bit; small (stack) and large (threads) copies") {
  MatmulPrecisionGuard medium("medium");
  unsigned seed = 5;
  // (33, 300, 70): copies on the stack; (300, 200, 500): from the allocator, rounded in parallel
  for (auto [M, K, N] : {std::tuple<int64_t, int64_t, int64_t>{1, 300, 70}, {33, 300, 70}, {300, 200, 500}})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        CAPTURE(M);
        CAPTURE(ta);
        CAPTURE(tb);
        const int64_t lda = (ta ? M : K) + 2, ldb = (tb ? K : N) + 3;
        const std::vector<real> A = random_buffer((ta ? K : M) * lda, seed++);
        const std::vector<real> B = random_buffer((tb ? N : K) * ldb, seed++);
        const int64_t ar = ta ? K : M, ac = ta ? M : K, br = tb ? N : K, bc = tb ? K : N;
        const std::vector<real> A16 = compact_rounded(A, lda, ar, ac), B16 = compact_rounded(B, ldb, br, bc);
        std::vector<real> want(M * N), exact(M * N), got_a(M * N), got_b(M * N), got_ab(M * N);
        gemm(ta, tb, M, N, K, real(0.5), A.data(), lda, B.data(), ldb, 0, want.data(), N);
        detail::gemm_exact(ta, tb, M, N, K, real(0.5), A16.data(), ac, B16.data(), bc, 0, exact.data(), N);
        gemm({true, false}, ta, tb, M, N, K, real(0.5), A16.data(), ac, B.data(), ldb, 0, got_a.data(), N);
        gemm({false, true}, ta, tb, M, N, K, real(0.5), A.data(), lda, B16.data(), bc, 0, got_b.data(), N);
        gemm({true, true}, ta, tb, M, N, K, real(0.5), A16.data(), ac, B16.data(), bc, 0, got_ab.data(), N);
        // What gemm computes: the rounded operands' product. On oneDNN's bf16 matmul (the CPU's
        // bf16 units) its float32 sums run in the bf16 kernel's order, not the f32 kernel's.
        if (detail::last_gemm_route() == detail::GemmRoute::onednn_bf16) {
          for (int64_t i = 0; i < M * N; ++i) REQUIRE(std::fabs(want[i] - exact[i]) <= 1e-5 * (1 + std::fabs(exact[i])) * K);
        } else {
          CHECK(same_bits(want.data(), exact.data(), M * N));
        }
        CHECK(same_bits(got_a.data(), want.data(), M * N));
        CHECK(same_bits(got_b.data(), want.data(), M * N));
        CHECK(same_bits(got_ab.data(), want.data(), M * N));
        // and given as their 16 bits too (a parameter's Bf16Copy, a Bf16Matrix on bf16 units)
        std::vector<uint16_t> a16(A16.size()), b16(B16.size());
        to_bf16_bits(A16.data(), a16.data(), long(A16.size()));
        to_bf16_bits(B16.data(), b16.data(), long(B16.size()));
        std::vector<real> got16(M * N);
        gemm({true, true, a16.data(), b16.data()}, ta, tb, M, N, K, real(0.5), A16.data(), ac, B16.data(), bc, 0, got16.data(), N);
        CHECK(same_bits(got16.data(), want.data(), M * N));
        gemm({false, false, a16.data(), nullptr}, ta, tb, M, N, K, real(0.5), A.data(), lda, B.data(), ldb, 0, got16.data(), N);
        CHECK(same_bits(got16.data(), want.data(), M * N));
      }
}

TEST_CASE("Bf16Matrix: under medium one conversion (16 bits on bf16 units, else a compact rounded copy); under highest the matrix itself") {
  const int64_t rows = 7, cols = 300, ld = 305;
  const std::vector<real> src = random_buffer(rows * ld, 3);
  {
    const Bf16Matrix same(src.data(), ld, rows, cols);
    CHECK(same.data() == src.data());
    CHECK(same.ld() == ld);
    CHECK(same.bits() == nullptr);
    CHECK(!same.rounded());
  }
  // both kinds of "medium": oneDNN (bf16 units where the CPU has them) and OpenBLAS (never)
  for (GemmEngine engine : {GemmEngine::onednn, GemmEngine::openblas}) {
    heed::test::EngineScope on(engine);
    MatmulPrecisionGuard medium("medium");
    CAPTURE(gemm_engine_name(engine));
    const Bf16Matrix m(src.data(), ld, rows, cols);
    bool all = true;
    if (gemm_on_bf16_units()) {  // the float operand is src itself; its 16 bits, compact
      CHECK(m.data() == src.data());
      CHECK(m.ld() == ld);
      CHECK(!m.rounded());
      REQUIRE(m.bits() != nullptr);
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<uint16_t> want(cols);
        to_bf16_bits(src.data() + r * ld, want.data(), long(cols));
        all &= std::memcmp(want.data(), m.bits() + r * cols, cols * sizeof(uint16_t)) == 0;
      }
    } else {
      CHECK((engine == GemmEngine::openblas || !detail::onednn_has_bf16()));
      CHECK(m.data() != src.data());
      CHECK(m.ld() == cols);
      CHECK(m.rounded());
      CHECK(m.bits() == nullptr);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) all &= m.data()[r * cols + c] == round_to_bf16(src[r * ld + c]);
    }
    CHECK(all);
  }
}

TEST_CASE("bf16_cached: parameters only, under medium only; outside a scope a fresh copy each call; in a scope one copy per version, dropped with the scope") {
  Tensor w = test::param({40, 30});
  CHECK(bf16_cached(w) == nullptr);  // highest
  MatmulPrecisionGuard medium("medium");
  CHECK(bf16_cached(randn({4, 3})) == nullptr);  // not a parameter
  CHECK(bf16_cached(w * real(2)) == nullptr);          // not a leaf
  const auto fresh = bf16_cached(w);
  REQUIRE(fresh != nullptr);
  CHECK(bf16_cached(w) != fresh);  // no scope: rounded again, nothing kept
  CHECK(bf16_cache_size() == 0);
  bool all = true;
  for (int64_t i = 0; i < w.numel(); ++i) all &= fresh->data()[i] == round_to_bf16(w.data()[i]);
  CHECK(all);
  std::shared_ptr<const Bf16Copy> first;
  {
    Bf16CacheScope keep;
    first = bf16_cached(w);
    REQUIRE(first != nullptr);
    {
      Bf16CacheScope nested;
      CHECK(bf16_cached(w) == first);  // a hit: the same copy
    }
    CHECK(bf16_cached(w) == first);  // the inner scope's end keeps the outer's copies
    {
      NoGradGuard no_grad;
      w.add_(full({40, 30}, 1));  // a new version: a new copy of the new values
    }
    const auto second = bf16_cached(w);
    REQUIRE(second != nullptr);
    CHECK(second != first);
    CHECK(second->data()[0] == round_to_bf16(w.data()[0]));
    CHECK(bf16_cache_size() == 1);
    {
      MatmulPrecisionGuard highest("highest");  // leaving medium empties the cache
      CHECK(bf16_cache_size() == 0);
    }
    CHECK(bf16_cached(w) != second);  // rounded again
    w = Tensor();  // the parameter's storage is gone: its copy is dropped at the next miss
    Tensor v = test::param({5});
    REQUIRE(bf16_cached(v) != nullptr);
    CHECK(bf16_cache_size() == 1);  // v's entry added, w's dropped
  }
  CHECK(bf16_cache_size() == 0);  // the scope's end drops its copies
  CHECK(first->data()[0] == round_to_bf16(real(first->data()[0])));  // a held copy stays valid
}

TEST_CASE("Bf16CacheScope: a scope keeps copies for its own thread only") {
  MatmulPrecisionGuard medium("medium");
  const Tensor w = test::param({8, 8});
  Bf16CacheScope keep;
  const auto mine = bf16_cached(w);
  bool other_kept = true;
  int64_t other_size = -1;
  std::thread([&] {
    other_kept = bf16_cached(w) == bf16_cached(w);  // no scope on this thread: fresh copies
    other_size = bf16_cache_size();
  }).join();
  CHECK_FALSE(other_kept);
  CHECK(other_size == 0);
  CHECK(bf16_cached(w) == mine);
}

// The probe and every route a program has to a parameter's values: each write must
// reach the next forward and its backward under "medium" (the forward equal, bit for bit, to
// the same product with a copy of W that no cache knows).
TEST_CASE("bf16 cache: every way of writing a parameter is seen by the next GEMM under medium, forward and backward") {
  MatmulPrecisionGuard medium("medium");
  nn::Linear lin(nn::LinearOptions(6, 4).bias(false));
  Tensor w = lin->weight;
  real* kept = w.data();  // a data() pointer kept from before any step
  const Tensor x = randn({3, 6}).requires_grad_();
  const Tensor dy = randn({3, 4});
  auto check_next_gemm = [&](const char* route) {
    CAPTURE(route);
    x.set_grad(Tensor());
    const Tensor y = linear(x, w);
    y.backward(dy);
    const Tensor plain = w.detach().clone();  // not a parameter: gemm rounds it at the call
    const Tensor x2 = x.detach().requires_grad_();
    const Tensor y_want = linear(x2, plain);
    y_want.backward(dy);
    CHECK(same_bits(y.data(), y_want.data(), y.numel()));
    CHECK(same_bits(x.grad().data(), x2.grad().data(), x.numel()));
  };
  check_next_gemm("first use");
  for (int64_t i = 0; i < w.numel(); ++i) w.data()[i] = real(2.5);  // no bump_version()
  check_next_gemm("data() without bump_version()");
  for (int64_t i = 0; i < w.numel(); ++i) kept[i] = real(-1.25) + real(i);
  check_next_gemm("a data() pointer kept across steps");
  w.requires_grad_(false);
  for (int64_t i = 0; i < w.numel(); ++i) w.data()[i] = real(7);
  w.requires_grad_(true);
  check_next_gemm("a write between requires_grad_(false) and (true)");
  auto no_grad = [](const auto& write) {  // in-place ops on a parameter need grad mode off
    NoGradGuard guard;
    write();
  };
  no_grad([&] { w.copy_(randn({4, 6})); });
  check_next_gemm("copy_");
  no_grad([&] { w.index_put_({indexing::Slice(0, 2)}, real(3)); });
  check_next_gemm("index_put_");
  no_grad([&] { w += real(1); });
  check_next_gemm("+=");
  nn::init::xavier_uniform_(w);
  check_next_gemm("nn::init");
  NamedTensors dict = lin->state_dict();
  dict[0].second = randn({4, 6});
  lin->load_state_dict(dict);
  check_next_gemm("load_state_dict");
  optim::SGD opt({w}, optim::SGDOptions(0.5));
  opt.step();  // w's gradient from the last check
  check_next_gemm("an optimizer step");
  {
    Bf16CacheScope keep;  // a scope keeps copies, but sees a version bump
    check_next_gemm("in a scope");
    no_grad([&] { w.mul_(real(-2)); });
    check_next_gemm("in a scope, after mul_");
    for (int64_t i = 0; i < w.numel(); ++i) w.data()[i] = real(0.5);
  }
  check_next_gemm("after a scope, a write in it without bump_version()");
}

TEST_CASE("linear under medium (cached W, dy rounded once) == each gemm rounding its inputs, bit for bit, over optimizer steps") {
  MatmulPrecisionGuard medium("medium");
  const int64_t N = 96, K = 80, M = 120;
  Tensor x = randn({N, K}).requires_grad_();
  Tensor w = test::param({M, K}, 0.1), b = test::param({M});
  optim::SGD opt({w, b}, optim::SGDOptions(0.1));
  for (int step = 0; step < 3; ++step) {
    CAPTURE(step);
    x.set_grad(Tensor());
    opt.zero_grad();
    const Tensor dy = randn({N, M});
    Tensor y = linear(x, w, b);
    y.backward(dy);
    // the same products, with gemm() rounding W, dy and x itself at every call
    std::vector<real> y_want(N * M), dx_want(N * K), dw_want(M * K);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m) y_want[n * M + m] = b.data()[m];
    gemm(false, true, N, M, K, 1, x.data(), K, w.data(), K, 1, y_want.data(), M);
    gemm(false, false, N, K, M, 1, dy.data(), M, w.data(), K, 0, dx_want.data(), K);
    gemm(true, false, M, K, N, 1, dy.data(), M, x.data(), K, 0, dw_want.data(), K);
    CHECK(same_bits(y.data(), y_want.data(), N * M));
    CHECK(same_bits(x.grad().data(), dx_want.data(), N * K));
    CHECK(same_bits(w.grad().data(), dw_want.data(), M * K));
    opt.step();  // a new version of w: the next forward rounds it again
  }
}

TEST_CASE("linear: what the forward converted under medium is used by its backward only while the precision is still medium") {
  MESSAGE("gemm_on_bf16_units: " << gemm_on_bf16_units() << " (x's 16 bits are kept only on bf16 units)");
  const int64_t N = 48, K = 40, M = 56;
  const Tensor dy = randn({N, M});
  for (const bool forward_medium : {true, false}) {
    CAPTURE(forward_medium);
    Tensor x = randn({N, K}).requires_grad_();
    Tensor w = test::param({M, K}, 0.1);
    Tensor y;
    {
      MatmulPrecisionGuard fwd(forward_medium ? "medium" : "highest");
      y = linear(x, w);
    }
    MatmulPrecisionGuard bwd(forward_medium ? "highest" : "medium");
    y.backward(dy);
    std::vector<real> dx_want(N * K), dw_want(M * K);  // the backward's precision, operands as they are
    gemm(false, false, N, K, M, 1, dy.data(), M, w.data(), K, 0, dx_want.data(), K);
    gemm(true, false, M, K, N, 1, dy.data(), M, x.data(), K, 0, dw_want.data(), K);
    CHECK(same_bits(x.grad().data(), dx_want.data(), N * K));
    CHECK(same_bits(w.grad().data(), dw_want.data(), M * K));
  }
}

TEST_CASE("lstm_cell under medium: cached weight copies (parameters) == weights rounded at every gemm (the same values as non-leaves), bit for bit, forward and backward") {
  MatmulPrecisionGuard medium("medium");
  const int64_t B = 16, In = 48, H = 40;
  const Tensor w_ih = test::param({4 * H, In}, 0.2), w_hh = test::param({4 * H, H}, 0.2);
  const Tensor b_ih = test::param({4 * H}), b_hh = test::param({4 * H});
  const Tensor dh = randn({B, H}), dc = randn({B, H});
  struct Run {
    Tensor h1, c1, dx, dh0, dw_ih, dw_hh;
  };
  auto run = [&](bool cached) {
    const Tensor x = randn({B, In}).requires_grad_(), h = randn({B, H}).requires_grad_();
    const Tensor c = randn({B, H});
    for (Tensor p : {w_ih, w_hh}) p.set_grad(Tensor());
    // w * 1: the same values, not a leaf, so not cached: gemm rounds it at every call
    const Tensor wi = cached ? w_ih : w_ih * real(1), wh = cached ? w_hh : w_hh * real(1);
    const auto [h1, c1] = lstm_cell(x, h, c, wi, wh, b_ih, b_hh);
    (sum(h1 * dh) + sum(c1 * dc)).backward();
    return Run{h1, c1, x.grad(), h.grad(), w_ih.grad(), w_hh.grad()};
  };
  manual_seed(7);
  Run a;
  {
    Bf16CacheScope keep;
    a = run(true);
    CHECK(bf16_cache_size() >= 2);
  }
  manual_seed(7);
  const Run b = run(false);
  const std::vector<std::pair<Tensor, Tensor>> pairs = {
      {a.h1, b.h1}, {a.c1, b.c1}, {a.dx, b.dx}, {a.dh0, b.dh0}, {a.dw_ih, b.dw_ih}, {a.dw_hh, b.dw_hh}};
  for (const auto& [p, q] : pairs) {
    REQUIRE(p.shape() == q.shape());
    CHECK(same_bits(p.data(), q.data(), p.numel()));
  }
}

TEST_CASE("bf16_cached: two parameters that are row blocks of one storage get a copy each") {
  Tensor big = randn({2, 30, 20});
  Tensor w0 = big[0].requires_grad_(), w1 = big[1].requires_grad_();  // views of big: leaves
  MatmulPrecisionGuard medium("medium");
  Bf16CacheScope keep;
  const auto c0 = bf16_cached(w0), c1 = bf16_cached(w1);
  REQUIRE(c0 != nullptr);
  REQUIRE(c1 != nullptr);
  CHECK(c0 != c1);
  CHECK(c1->data()[0] == round_to_bf16(big.at({1, 0, 0})));
  CHECK(bf16_cached(w1) == c1);  // keyed by storage and offset: a hit
}
