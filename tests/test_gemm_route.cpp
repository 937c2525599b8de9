// test_gemm_route.cpp - a product's route (core/blas.h, detail::gemm_route) is a rule on the
// call, so the same call gives the same bits on its first call and on every later one, on
// every CPU: the route that ran never changes between a key's first and its hundredth call,
// each route forced gives identical bits call after call (also with an epilogue: a bias,
// GELU with its derivative and a residual, gemm_fused), a steady loop makes its oneDNN
// primitives in its first step only, and the machine's load (dynamic threads) never changes a
// GEMM's team. On an AVX2 CPU oneDNN's sgemm and its primitives share one kernel, so bits alone
// could not tell a route change there: the routes are observed (detail::last_gemm_route).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <tuple>
#include <vector>

#include <heed/core/blas.h>
#include <heed/core/gemm_engine.h>
#include <heed/core/matmul_precision.h>
#include <heed/core/onednn_matmul.h>
#include "gemm_engine_scope.h"
#include "helpers.h"

using namespace heed;
using heed::test::EngineScope;
using heed::test::kEngineSettings;
using heed::test::random_buffer;

namespace {

bool same_bits(const std::vector<real>& a, const std::vector<real>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(real)) == 0;
}

// One product of the grid: op(A) (M, K), op(B) (K, N), padded leading dims.
struct Product {
  int64_t M, N, K;
  bool ta, tb;
  real alpha, beta;
  std::vector<real> A, B, C0;
  int64_t lda, ldb;
  Product(int64_t m, int64_t n, int64_t k, bool ta_, bool tb_, real al, real be, unsigned seed)
      : M(m), N(n), K(k), ta(ta_), tb(tb_), alpha(al), beta(be) {
    lda = (ta ? M : K) + 1;
    ldb = (tb ? K : N) + 2;
    A = random_buffer((ta ? K : M) * lda, seed);
    B = random_buffer((tb ? N : K) * ldb, seed + 1);
    C0 = random_buffer(M * N, seed + 2);
  }
  detail::GemmCall call() const {
    detail::GemmCall c;
    c.trans_a = ta, c.trans_b = tb, c.M = M, c.N = N, c.K = K, c.alpha = alpha, c.beta = beta;
    c.A = A.data(), c.lda = lda, c.B = B.data(), c.ldb = ldb, c.ldc = N;
    return c;
  }
  std::vector<real> run() const {  // C = alpha op(A) op(B) + beta C0
    std::vector<real> C = C0;
    gemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), N);
    return C;
  }
  // C = gelu(op(A) op(B) + bias) + R (R: C0, compact), then D = gelu'(...): the fused
  // product with every part of an epilogue (core/gemm_epilogue.h), bias = B's first row
  std::vector<real> run_fused() const {
    std::vector<real> CD(2 * M * N);
    GemmEpilogue ep;
    ep.bias = B.data(), ep.activation = GemmActivation::gelu_erf, ep.derivative = CD.data() + M * N;
    ep.ldd = N, ep.residual = C0.data(), ep.ldr = N;
    gemm_fused(ep, {}, ta, tb, M, N, K, A.data(), lda, B.data(), ldb, CD.data(), N);
    return CD;
  }
};

std::vector<Product> grid() {
  std::vector<Product> out;
  unsigned seed = 100;
  for (int64_t M : {1, 2, 7, 33, 64})
    for (int64_t K : {16, 100, 384, 1536})
      for (int64_t N : {5, 65, 384}) {
        const bool t = (M + K + N) % 2 == 0;
        out.emplace_back(M, N, K, t, !t, real(M % 3 == 0 ? 0.5 : 1), real(K == 100 ? 1 : 0), seed);
        seed += 3;
      }
  return out;
}

}  // namespace

TEST_CASE("gemm route: a rule on the call; the same route and the same bits from the first call to the hundredth") {
  const std::vector<Product> products = grid();
  for (const char* precision : {"highest", "medium"})
    for (const heed::test::EngineSetting& s : kEngineSettings) {
      MatmulPrecisionGuard p(precision);
      EngineScope on(s.engine, s.route);
      detail::onednn_clear_cache();  // every key seen for the first time below
      CAPTURE(precision);
      CAPTURE(s.name);
      int differing = 0, rerouted = 0;
      for (const Product& x : products) {
        CAPTURE(x.M);
        CAPTURE(x.N);
        CAPTURE(x.K);
        const detail::GemmRoute planned = detail::gemm_route(x.call());
        const std::vector<real> first = x.run(), first_fused = x.run_fused();
        CHECK(detail::last_gemm_route() == planned);
        // the big products 3 times, the small ones 100 (cheap, and where a count would show)
        const int calls = x.M * x.N * x.K > (1 << 20) ? 3 : 100;
        for (int c = 1; c < calls; ++c) {
          const std::vector<real> again = x.run();
          rerouted += detail::last_gemm_route() != planned;
          differing += !same_bits(again, first);
          const std::vector<real> again_fused = x.run_fused();  // and with an epilogue
          rerouted += detail::last_gemm_route() != planned;
          differing += !same_bits(again_fused, first_fused);
        }
      }
      CHECK(rerouted == 0);
      CHECK(differing == 0);
    }
}

TEST_CASE("gemm route: the rule itself, on every CPU") {
  const Product one_row(1, 65, 384, false, false, 1, 0, 1), rows(7, 65, 384, false, true, 1, 0, 4);
  {
    EngineScope on(GemmEngine::onednn);
    MatmulPrecisionGuard p("highest");
    // every f32 product on dnnl_sgemm: no primitive to make, whatever the shape
    CHECK(detail::gemm_route(one_row.call()) == detail::GemmRoute::onednn_sgemm);
    CHECK(detail::gemm_route(rows.call()) == detail::GemmRoute::onednn_sgemm);
    detail::GemmCall empty = rows.call();
    empty.K = 0;
    CHECK(detail::gemm_route(empty) == detail::GemmRoute::scale_c);
    empty.N = 0;
    CHECK(detail::gemm_route(empty) == detail::GemmRoute::none);
  }
  {
    EngineScope on(GemmEngine::onednn);
    MatmulPrecisionGuard p("medium");
    CHECK(detail::gemm_route(rows.call()) ==
          (detail::onednn_has_bf16() ? detail::GemmRoute::onednn_bf16 : detail::GemmRoute::onednn_sgemm));
    CHECK(detail::gemm_route(one_row.call()) == detail::GemmRoute::onednn_sgemm);
    CHECK(detail::gemm_rounds_copies(one_row.call(), detail::GemmRoute::onednn_sgemm));
  }
  {
    EngineScope on(GemmEngine::onednn, detail::OnednnRoute::primitive);  // as tests force it
    CHECK(detail::gemm_route(rows.call()) == detail::GemmRoute::onednn_matmul);
  }
  {
    EngineScope on(GemmEngine::openblas);
    CHECK(detail::gemm_route(one_row.call()) == detail::GemmRoute::openblas_gemv);
    CHECK(detail::gemm_route(rows.call()) == detail::GemmRoute::openblas_gemm);
  }
  CHECK(std::string(detail::gemm_route_name(detail::GemmRoute::onednn_bf16)) == "onednn_bf16");
}

TEST_CASE("gemm route: a decoding loop's growing length makes no primitive; a steady loop makes its primitives in its first step") {
  EngineScope on(GemmEngine::onednn);
  std::vector<real> a(64 * 512, real(0.5)), b(512 * 64, real(0.25)), c(64 * 512, 0);
  for (const char* precision : {"highest", "medium"}) {
    CAPTURE(precision);
    MatmulPrecisionGuard p(precision);
    detail::onednn_clear_cache();
    for (int64_t n = 1; n <= 200; ++n) {  // scores of one query against n keys, then the context
      gemm(false, true, 1, n, 64, 1, a.data(), 64, b.data(), 64, 0, c.data(), n);
      gemm(false, false, 1, 64, n, 1, a.data(), n, b.data(), 64, 0, c.data(), 64);
    }
    CHECK(detail::onednn_cached_primitives() == 0);
    // a training step's three products: primitives only for bf16 products ("medium" on the
    // CPU's bf16 units), all made in the first step
    const std::size_t want = std::string(precision) == "medium" && detail::onednn_has_bf16() ? 3 : 0;
    for (int step = 0; step < 5; ++step) {
      gemm(false, true, 32, 64, 48, 1, a.data(), 48, b.data(), 48, 0, c.data(), 64);
      gemm(false, false, 32, 48, 64, 1, c.data(), 64, b.data(), 48, 0, a.data(), 48);
      gemm(true, false, 64, 48, 32, 1, c.data(), 64, a.data(), 48, 1, b.data(), 48);
      CHECK(detail::onednn_cached_primitives() == want);
    }
  }
}

TEST_CASE("gemm route: a GEMM's team is the thread count set, never the machine's load") {
  const int before = get_num_threads();
  const bool dynamic = get_dynamic_threads();
  set_num_threads(2);
  set_dynamic_threads(true);
  // Products whose libraries split K between threads for some team sizes (dnnl_sgemm for one
  // row and K >= 384, OpenBLAS at K = 3000): a team that followed the load would change them.
  std::vector<Product> products;
  for (int64_t K : {384, 1536, 3000}) {
    products.emplace_back(1, 65, K, false, false, 1, 0, unsigned(K));
    products.emplace_back(64, 65, K, false, false, 1, 0, unsigned(K) + 7);
  }
  std::vector<std::vector<real>> quiet[2];
  for (int e = 0; e < 2; ++e) {
    EngineScope on(e ? GemmEngine::openblas : GemmEngine::onednn);
    for (const Product& x : products) quiet[e].push_back(x.run());
  }
  CHECK(detail::gemm_threads() == 2);
  // Two busy processes: on a machine of up to 3 cores dynamic threads now give heed's loops
  // one thread (core/parallel.h); a GEMM must keep the two set.
  pid_t busy[2];
  for (pid_t& p : busy) {
    p = fork();
    REQUIRE(p >= 0);
    if (p == 0)
      for (;;) {
      }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(120));  // past the 50 ms sampling period
  const int loaded = detail::threads_now();
  int differing = 0;
  for (int e = 0; e < 2; ++e) {
    EngineScope on(e ? GemmEngine::openblas : GemmEngine::onednn);
    for (std::size_t i = 0; i < products.size(); ++i) differing += !same_bits(products[i].run(), quiet[e][i]);
  }
  const int gemm_team = detail::gemm_threads();
  for (pid_t p : busy) {
    kill(p, SIGKILL);
    waitpid(p, nullptr, 0);
  }
  MESSAGE("dynamic threads under two busy processes: ", loaded, " for heed's loops, ", gemm_team, " for GEMMs");
  CHECK(gemm_team == 2);
  CHECK(differing == 0);
  set_dynamic_threads(dynamic);
  set_num_threads(before);
}
