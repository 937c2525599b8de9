// test_gemm_batched.cpp - core/blas.h's gemm_batched: `count` products of one shape, operands
// a stride apart (0: broadcast). For small products (below 128^3 multiply-adds) under "medium"
// on the bf16 units it is one batched oneDNN primitive (route onednn_bf16_batched); everywhere
// else it is its reference, the loop of gemm() calls (detail::gemm_batched_reference).
// Here: the two agree over transposes, padded leading dims and batch strides, a broadcast A or
// B, beta 0 and 1, one product, one row, K = 0 and an empty batch: bit for bit on one thread
// when neither side ran on AMX tiles (oneDNN's AVX512_BF16 kernels, brgemm and gemm:jit, sum
// each value of C over the same K pairs in the same order; seen on Zen 4). On a CPU with AMX,
// oneDNN puts some batches on its AMX kernel (brg:avx512_core_amx_bf16) and their one-product
// halves on its AVX512_BF16 ones, which sum in tiles of 32 pairs: those are held to the bound
// below, and counted (detail::onednn_amx_runs says which ran). On more threads oneDNN cuts the batch's work over them as it sees fit, and for a few
// shapes (seen on 2 threads: 5 products of 7 rows) it sums some values of C in K chunks that
// the one-product primitives of the loop do not, so the two add the same exact bf16 products
// (each exact in float32) in another float32 order: within (K + 2) 2^-23 sum_k |a b| of each
// other, and the test counts those that are not the loop's bits. The route is a rule on the
// call, and the same call gives the same bits on its first, second and tenth run, with other
// shapes run in between; matmul's forward and backward (which call it) agree with the loop in
// the same way; bad arguments are a heed::Error. Each case says which route ran (on a CPU
// without bf16 units, or at HEED_CPU=avx2, the loop: the comparisons then hold trivially, and
// the test says so).
//
// Letters: a batch of `count` products C_i (M, N) = alpha op(A_i) (M, K) op(B_i) (K, N) + beta C_i.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/broadcast.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/core/blas.h>
#include <heed/core/cpu.h>
#include <heed/core/gemm_engine.h>
#include <heed/core/matmul_precision.h>
#include <heed/core/onednn_matmul.h>
#include <heed/core/random.h>
#include "gemm_engine_scope.h"
#include "helpers.h"

using namespace heed;
using heed::test::EngineScope;
using heed::test::random_buffer;

namespace {

bool same_bits(const std::vector<real>& a, const std::vector<real>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(real)) == 0;
}

// Whether got and ref (n values) differ by at most (K + 2) 2^-23 bound in every value, bound
// holding sum_k |a b| (+ |beta c|): two float32 sums, in any order, of the same K products.
bool within_order_bound(const real* got, const real* ref, const real* bound, int64_t n, int64_t K) {
  for (int64_t j = 0; j < n; ++j)
    if (!(std::fabs(got[j] - ref[j]) <= (K + 2) * std::ldexp(bound[j], -23))) return false;
  return true;
}

std::vector<real> absolute(std::vector<real> v) {
  for (real& x : v) x = std::fabs(x);
  return v;
}

// heed's thread count for a scope, the one before restored after it.
struct ThreadsScope {
  int before = get_num_threads();
  explicit ThreadsScope(int n) { set_num_threads(n); }
  ~ThreadsScope() { set_num_threads(before); }
  ThreadsScope(const ThreadsScope&) = delete;
  ThreadsScope& operator=(const ThreadsScope&) = delete;
};

// One batched call: its shape, its operands in padded storage, and its starting C.
struct Batch {
  GemmBatch batch;
  int64_t M, N, K;
  bool ta, tb;
  real alpha, beta;
  int64_t lda, ldb, ldc;
  std::vector<real> A, B, C0;  // count (or 1) matrices each, stride apart
  Batch(int64_t count, int64_t m, int64_t n, int64_t k, bool ta_, bool tb_, bool bcast_a, bool bcast_b,
        real be, unsigned seed, bool pad_c = false)
      : M(m), N(n), K(k), ta(ta_), tb(tb_), alpha(real(0.75)), beta(be) {
    lda = (ta ? M : K) + 1;  // padded rows
    ldb = (tb ? K : N) + 2;
    ldc = pad_c ? N + 3 : N;
    const int64_t a_stored = (ta ? K : M) * lda + 5, b_stored = (tb ? N : K) * ldb + 7;  // gaps between matrices
    batch = {count, bcast_a ? 0 : a_stored, bcast_b ? 0 : b_stored, M * ldc + (pad_c ? 1 : 0)};
    A = random_buffer(std::max<int64_t>(bcast_a ? 1 : count, 1) * a_stored, seed);
    B = random_buffer(std::max<int64_t>(bcast_b ? 1 : count, 1) * b_stored, seed + 1);
    C0 = random_buffer(std::max<int64_t>(count, 1) * batch.stride_c, seed + 2);
  }
  std::vector<real> run() const {
    std::vector<real> C = C0;
    gemm_batched(batch, ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
    return C;
  }
  bool dense_c() const { return ldc == N && batch.stride_c == M * N; }
  // |alpha| sum_k |a b| + |beta c| for every value of C (1% more: |a b| of the unrounded
  // values bounds that of their bfloat16 roundings)
  std::vector<real> bound() const {
    const std::vector<real> absA = absolute(A), absB = absolute(B);
    std::vector<real> out = absolute(C0);
    for (int64_t i = 0; i < batch.count; ++i)
      gemm_naive(ta, tb, M, N, K, std::fabs(alpha) * real(1.01), absA.data() + i * batch.stride_a, lda,
                 absB.data() + i * batch.stride_b, ldb, std::fabs(beta), out.data() + i * batch.stride_c, ldc);
    return out;
  }
  std::vector<real> reference() const {
    std::vector<real> C = C0;
    detail::gemm_batched_reference(batch, ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta,
                                   C.data(), ldc);
    return C;
  }
  detail::GemmRoute route() const {
    detail::GemmCall c;
    c.trans_a = ta, c.trans_b = tb, c.M = M, c.N = N, c.K = K, c.alpha = alpha, c.beta = beta;
    c.A = A.data(), c.lda = lda, c.B = B.data(), c.ldb = ldb, c.ldc = ldc;
    return detail::gemm_batched_route(c, batch);
  }
  std::string name() const {
    return "count=" + std::to_string(batch.count) + " M=" + std::to_string(M) + " N=" + std::to_string(N) +
           " K=" + std::to_string(K) + (ta ? " A^T" : "") + (tb ? " B^T" : "") +
           (batch.stride_a == 0 ? " A broadcast" : "") + (batch.stride_b == 0 ? " B broadcast" : "") +
           (dense_c() ? "" : " C padded") + " beta=" + std::to_string(int(beta));
  }
};

std::vector<Batch> grid() {
  std::vector<Batch> out;
  unsigned seed = 300;
  // products of 128^3 multiply-adds and more, which the loop runs one at a time on all threads
  out.emplace_back(3, 130, 128, 128, false, false, false, false, 0, seed);
  out.emplace_back(3, 130, 129, 128, true, true, false, true, 1, seed + 3, true);
  for (int64_t count : {0, 1, 2, 5})
    for (int64_t M : {1, 7, 64})
      for (int64_t K : {0, 16, 100})
        for (int shape = 0; shape < 8; ++shape) {  // transposes and a broadcast operand
          const bool ta = shape & 1, tb = shape & 2, bcast_a = shape == 4 || shape == 5, bcast_b = shape >= 6;
          const int64_t N = shape % 3 == 0 ? 65 : 5;
          for (bool pad_c : {false, true}) {
            out.emplace_back(count, M, N, K, ta, tb, bcast_a, bcast_b, real(shape % 2 ? 1 : 0), seed, pad_c);
            seed += 3;
          }
        }
  return out;
}

// The route gemm_batched takes for a call of more than one row and product, K > 0, now.
bool batched_route_runs() {
  Batch b(2, 4, 4, 4, false, false, false, false, 0, 1);
  return b.route() == detail::GemmRoute::onednn_bf16_batched;
}

}  // namespace

TEST_CASE("gemm_batched: the batched route gives the loop's bits, over transposes, strides, broadcasts, beta, and empty edges") {
  const int threads = get_num_threads();
  for (int t : {1, threads}) {
    ThreadsScope scope(t);
    for (const char* precision : {"highest", "medium"}) {
      MatmulPrecisionGuard guard(precision);
      int batched = 0, looped = 0, reordered = 0, amx = 0;
      for (const Batch& b : grid()) {
        CAPTURE(t);
        CAPTURE(std::string(precision));
        CAPTURE(b.name());
        const detail::GemmRoute route = b.route();
        // the rule: one primitive exactly when each product is on the bf16 units and there are several
        const bool expect = gemm_on_bf16_units() && b.batch.count > 1 && b.M > 1 && b.K > 0 &&
                            b.M * b.N * b.K < 128 * 128 * 128;
        CHECK((route == detail::GemmRoute::onednn_bf16_batched) == expect);
        const int64_t amx_before = detail::onednn_amx_runs();
        const std::vector<real> got = b.run();
        if (b.batch.count > 0 && b.M > 0 && b.N > 0) CHECK(detail::last_gemm_route() == route);
        const std::vector<real> ref = b.reference();
        const bool on_amx = detail::onednn_amx_runs() != amx_before;
        amx += on_amx;
        if (route != detail::GemmRoute::onednn_bf16_batched || (t == 1 && !on_amx)) {
          CHECK(same_bits(got, ref));
        } else {
          CHECK(within_order_bound(got.data(), ref.data(), b.bound().data(), int64_t(got.size()), b.K));
          reordered += !same_bits(got, ref);
        }
        (route == detail::GemmRoute::onednn_bf16_batched ? batched : looped) += 1;
      }
      MESSAGE(("gemm_batched on " + std::to_string(t) + " threads under \"" + precision + "\" on " +
               gemm_engine_name(gemm_engine()) + " at " + cpu_capability() + ": " + std::to_string(batched) +
               " calls on one batched primitive (" +
               detail::gemm_route_name(detail::GemmRoute::onednn_bf16_batched) + "), " + std::to_string(looped) +
               " on the loop of gemm(); " + std::to_string(amx) + " with a product on AMX tiles; " +
               std::to_string(reordered) + " of them summed in another order than the loop, within the bound"));
    }
  }
}

TEST_CASE("gemm_batched: the same call gives the same bits on its 1st, 2nd and 10th run, other shapes in between") {
  MatmulPrecisionGuard guard("medium");
  const Batch b(12, 48, 40, 72, false, true, false, false, 1, 11, true);  // C padded too
  const Batch other1(3, 33, 17, 200, true, false, false, true, 0, 21);
  const Batch other2(7, 9, 64, 16, false, false, true, false, 1, 31);
  const std::vector<real> first = b.run();
  const detail::GemmRoute route = detail::last_gemm_route();
  CHECK(same_bits(b.run(), first));
  for (int i = 2; i < 9; ++i) {
    other1.run();
    other2.run();
    CHECK(same_bits(b.run(), first));
    CHECK(detail::last_gemm_route() == route);
  }
  detail::onednn_clear_cache();  // a primitive made again is the same primitive
  CHECK(same_bits(b.run(), first));
  MESSAGE(("route of the repeated call: " + std::string(detail::gemm_route_name(route))));
}

TEST_CASE("gemm_batched: off the bf16 units, and for large products, the rule picks the loop") {
  MatmulPrecisionGuard guard("medium");
  {  // 128^3 multiply-adds a product and more: one primitive a product, on all threads
    const Batch large(3, 128, 128, 128, false, false, false, false, 0, 51);
    const Batch small(3, 127, 128, 128, false, false, false, false, 0, 52);
    CHECK(large.route() != detail::GemmRoute::onednn_bf16_batched);
    CHECK((small.route() == detail::GemmRoute::onednn_bf16_batched) == gemm_on_bf16_units());
  }
  {
    EngineScope openblas(GemmEngine::openblas);
    CHECK_FALSE(batched_route_runs());
    const Batch b(4, 16, 16, 16, false, false, false, false, 0, 41);
    CHECK(same_bits(b.run(), b.reference()));
    CHECK(detail::last_gemm_route() != detail::GemmRoute::onednn_bf16_batched);
  }
  {
    MatmulPrecisionGuard highest("highest");
    CHECK_FALSE(batched_route_runs());
  }
  CHECK(batched_route_runs() == gemm_on_bf16_units());
  MESSAGE(("at " + std::string(cpu_capability()) + " on " + gemm_engine_name(gemm_engine()) +
          ", \"medium\": bf16 units " + (gemm_on_bf16_units() ? "yes" : "no") + ", so batches run on " +
          (batched_route_runs() ? "one batched primitive" : "the loop of gemm()")));
}

TEST_CASE("gemm_batched: bad arguments are a heed::Error naming gemm") {
  std::vector<real> A(64, 1), B(64, 1), C(64, 0);
  auto call = [&](GemmBatch b) {
    gemm_batched(b, false, false, 2, 2, 2, 1, A.data(), 2, B.data(), 2, 0, C.data(), 2);
  };
  CHECK(heed::test::error_of([&] { call({2, 4, 4, 0}); }).find("gemm") != std::string::npos);
  CHECK(heed::test::error_of([&] { call({-1, 4, 4, 4}); }).find("gemm") != std::string::npos);
  CHECK(heed::test::error_of([&] { call({2, -4, 4, 4}); }).find("gemm") != std::string::npos);
  CHECK(heed::test::error_of([&] {
          detail::gemm_batched_reference({2, 4, 4, 0}, false, false, 2, 2, 2, 1, A.data(), 2, B.data(), 2, 0,
                                         C.data(), 2);
        }).find("distinct C") != std::string::npos);
  CHECK_NOTHROW(call({3, 0, 0, 4}));  // both operands broadcast
}

namespace {
// matmul(a, b) forward and backward (dC = w) against the loop of gemm() calls, one per batch,
// over the broadcast batch: each gradient of a broadcast operand is the per-batch products
// summed back as matmul's backward sums them (sum_to). The loop's bits when `exact` (one
// thread) and no product ran on AMX tiles, else within the reordering bound (above), summed
// back with the gradients. Returns whether a product ran on AMX tiles.
bool check_matmul_against_loop(const Shape& as, const Shape& bs, bool exact) {
  CAPTURE(as.str());
  CAPTURE(bs.str());
  const int64_t amx_before = detail::onednn_amx_runs();
  Tensor a = randn(as).requires_grad_(), b = randn(bs).requires_grad_();
  Tensor c = matmul(a, b);
  const Shape& cs = c.shape();  // (batch..., N, M)
  Tensor w = randn(cs);
  sum(c * w).backward();
  const int64_t N = as[-2], K = as[-1], M = bs[-1];
  Shape batch = cs;
  batch.erase(batch.size() - 1);
  batch.erase(batch.size() - 1);
  const int64_t count = batch.numel();
  // each batch's matrix of a and b: its index into the (broadcast) operand
  auto index_in = [&](const Shape& s, int64_t bi) {
    int64_t off = 0, step = 1;
    for (int d = batch.size() - 1; d >= 0; --d) {
      const int sd = d - (batch.size() - (s.size() - 2));  // s's dim for batch dim d (s may have fewer)
      const int64_t i = bi % batch[d];
      bi /= batch[d];
      if (sd < 0) continue;
      if (s[sd] != 1) off += i * step;
      step *= s[sd];
    }
    return off;
  };
  auto with_matrix = [&](int64_t rows, int64_t cols) {  // (batch..., rows, cols)
    Shape s = batch;
    s.push_back(rows);
    s.push_back(cols);
    return s;
  };
  Tensor c_ref = empty(cs), c_bound = empty(cs);  // (batch..., N, M)
  Tensor da_full = empty(with_matrix(N, K)), da_bound = empty(with_matrix(N, K));  // dA per batch
  Tensor db_full = empty(with_matrix(K, M)), db_bound = empty(with_matrix(K, M));  // dB per batch
  const std::vector<real> abs_a = absolute({a.data(), a.data() + a.numel()});
  const std::vector<real> abs_b = absolute({b.data(), b.data() + b.numel()});
  const std::vector<real> abs_w = absolute({w.data(), w.data() + w.numel()});
  const real over = real(1.01);  // |a b| of the unrounded values bounds the rounded ones'
  for (int64_t bi = 0; bi < count; ++bi) {
    const int64_t ia = index_in(as, bi) * N * K, ib = index_in(bs, bi) * K * M, iw = bi * N * M;
    const real *A = a.data() + ia, *B = b.data() + ib, *W = w.data() + iw;
    gemm(false, false, N, M, K, 1, A, K, B, M, 0, c_ref.data() + bi * N * M, M);
    gemm(false, true, N, K, M, 1, W, M, B, M, 0, da_full.data() + bi * N * K, K);
    gemm(true, false, K, M, N, 1, A, K, W, M, 0, db_full.data() + bi * K * M, M);
    gemm_naive(false, false, N, M, K, over, &abs_a[ia], K, &abs_b[ib], M, 0, c_bound.data() + bi * N * M, M);
    gemm_naive(false, true, N, K, M, over, &abs_w[iw], M, &abs_b[ib], M, 0, da_bound.data() + bi * N * K, K);
    gemm_naive(true, false, K, M, N, over, &abs_a[ia], K, &abs_w[iw], M, 0, db_bound.data() + bi * K * M, M);
  }
  if (detail::onednn_amx_runs() != amx_before) exact = false;
  // x against ref: the same bits, or within the bound of sums of `terms` products
  auto agree = [&](const Tensor& x, const Tensor& ref, const Tensor& bound, int64_t terms) {
    if (x.shape() != ref.shape()) return false;
    if (exact) return std::memcmp(x.data(), ref.data(), x.numel() * sizeof(real)) == 0;
    return within_order_bound(x.data(), ref.data(), bound.data(), x.numel(), terms);
  };
  auto summed = [](const Tensor& full, const Shape& s) { return full.shape() == s ? full : sum_to(full, s); };
  CHECK(agree(c, c_ref, c_bound, K));
  CHECK(agree(a.grad(), summed(da_full, as), summed(da_bound, as), M));
  CHECK(agree(b.grad(), summed(db_full, bs), summed(db_bound, bs), N));
  return detail::onednn_amx_runs() != amx_before;
}
}  // namespace

TEST_CASE("gemm_batched: matmul and bmm forward and backward under \"medium\" give the loop's bits (within the bound where AMX ran)") {
  manual_seed(7);
  const int threads = get_num_threads();
  int on_amx = 0;
  for (int t : {1, threads})
    for (const char* precision : {"medium", "highest"}) {
      CAPTURE(t);
      CAPTURE(std::string(precision));
      ThreadsScope scope(t);
      MatmulPrecisionGuard guard(precision);
      const bool exact = t == 1 || !gemm_on_bf16_units();  // the loop itself off the bf16 units
      on_amx += check_matmul_against_loop({6, 33, 24}, {6, 24, 40}, exact);      // bmm: one batch dim, both contiguous
      on_amx += check_matmul_against_loop({2, 3, 16, 8}, {3, 8, 12}, exact);     // B broadcast over the first dim
      on_amx += check_matmul_against_loop({4, 1, 9, 20}, {1, 5, 20, 7}, exact);  // (4, 1) x (1, 5): split as 4 x 5
      on_amx += check_matmul_against_loop({1, 24, 16}, {5, 16, 24}, exact);      // A broadcast
      on_amx += check_matmul_against_loop({3, 1, 16}, {3, 16, 10}, exact);       // one row
      on_amx += check_matmul_against_loop({5, 7, 100}, {5, 100, 65}, exact);     // 5 products of 7 rows
    }
  MatmulPrecisionGuard medium("medium");
  MESSAGE((std::string("matmul's batches under \"medium\" run on ") +
          (gemm_on_bf16_units() ? "one batched primitive" : "the loop of gemm()") + "; " +
          std::to_string(on_amx) + " of 24 cases ran a product on AMX tiles (held to the bound, not the bits)"));
}
