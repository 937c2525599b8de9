// test_blas.cpp - core/blas.h: gemm against gemm_naive, its plain triple loop, for every pair
// of transpose flags, alpha and beta, odd and degenerate sizes, and leading dimensions wider
// than the rows (a sub-matrix of a larger buffer); on each engine (core/gemm_engine.h:
// OpenBLAS, and oneDNN on each of its two routes, a cached primitive and dnnl_sgemm).
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <heed/core/blas.h>
#include <heed/core/gemm_engine.h>
#include <heed/core/onednn_matmul.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/unary.h>
#include "gemm_engine_scope.h"
#include "helpers.h"

using namespace heed;

using heed::test::EngineScope;
using heed::test::random_buffer;

namespace {
void check_gemm_against_naive() {
  const struct { int64_t M, N, K; } sizes[] = {{1, 1, 1}, {7, 5, 3}, {3, 11, 17}, {33, 2, 65},
                                               {4, 6, 0},  // K = 0: C = beta * C
                                               {1, 9, 13}, {1, 40, 7},  // M = 1: the gemv path
                                               {70, 1, 9}, {130, 67, 45}};
  const double scalars[][2] = {{1, 0}, {0.5, 1}, {-2, 0.25}, {0, 3}};  // {alpha, beta}
  unsigned seed = 1;
  for (const auto& sz : sizes)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const auto& ab : scalars)
          for (int64_t pad : {0, 3}) {
            CAPTURE(sz.M);
            CAPTURE(sz.N);
            CAPTURE(sz.K);
            CAPTURE(ta);
            CAPTURE(tb);
            CAPTURE(ab[0]);
            CAPTURE(ab[1]);
            CAPTURE(pad);
            const int64_t M = sz.M, N = sz.N, K = sz.K;
            // A is (M, K), stored (K, M) when transposed; likewise B (K, N) or (N, K).
            const int64_t a_rows = ta ? K : M, a_cols = ta ? M : K;
            const int64_t b_rows = tb ? N : K, b_cols = tb ? K : N;
            const int64_t lda = a_cols + pad, ldb = b_cols + pad, ldc = N + pad;
            const std::vector<real> A = random_buffer(std::max<int64_t>(a_rows * lda, 1), seed++);
            const std::vector<real> B = random_buffer(std::max<int64_t>(b_rows * ldb, 1), seed++);
            std::vector<real> C1 = random_buffer(M * ldc, seed++), C2 = C1;
            gemm(ta, tb, M, N, K, real(ab[0]), A.data(), std::max<int64_t>(lda, 1), B.data(),
                 std::max<int64_t>(ldb, 1), real(ab[1]), C1.data(), ldc);
            gemm_naive(ta, tb, M, N, K, real(ab[0]), A.data(), std::max<int64_t>(lda, 1),
                       B.data(), std::max<int64_t>(ldb, 1), real(ab[1]), C2.data(), ldc);
            for (int64_t i = 0; i < M; ++i)
              for (int64_t j = 0; j < ldc; ++j) {
                const double x = C1[i * ldc + j], y = C2[i * ldc + j];
                if (j >= N) {  // the padding past each row of C is never written
                  REQUIRE(x == y);
                  continue;
                }
                REQUIRE(std::fabs(x - y) <= 1e-4 * (1 + std::fabs(y)) * (1 + std::sqrt(double(K))));
              }
          }
}

}  // namespace

TEST_CASE("gemm == gemm_naive: transpose flags x alpha/beta x odd sizes x padded leading dims") {
  SUBCASE("the engine in use") { check_gemm_against_naive(); }
#ifndef HEED_DOUBLE
  SUBCASE("OpenBLAS") {
    EngineScope on(GemmEngine::openblas);
    check_gemm_against_naive();
  }
  SUBCASE("oneDNN, a matmul primitive for every product") {
    EngineScope on(GemmEngine::onednn, detail::OnednnRoute::primitive);
    check_gemm_against_naive();
  }
  SUBCASE("oneDNN, dnnl_sgemm for every product") {
    EngineScope on(GemmEngine::onednn, detail::OnednnRoute::sgemm);
    check_gemm_against_naive();
  }
  SUBCASE("oneDNN, chosen per shape, each shape run twice") {
    EngineScope on(GemmEngine::onednn);
    check_gemm_against_naive();  // first sightings: dnnl_sgemm
    check_gemm_against_naive();  // second: a primitive where oneDNN has a better kernel
  }
#endif
}
