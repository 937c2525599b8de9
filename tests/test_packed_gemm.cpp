// test_packed_gemm.cpp - core/packed_gemm.h: gemm_packed (B packed once, register-blocked
// kernel) against gemm_packed_naive, its plain triple loop: every row-block height the kernel
// has (1..6 and more than 6 rows), whole and partial panels, both packings, = and +=, and
// leading dimensions wider than the rows (the recurrent layers read one step of a (B, T, .)
// buffer).
#include <random>
#include <vector>

#include <heed/core/packed_gemm.h>
#include "helpers.h"

using namespace heed;

using heed::test::random_buffer;

TEST_CASE("gemm_packed == gemm_packed_naive: row blocks 1..13, partial panels, both packings") {
  unsigned seed = 7;
  for (int64_t M : {1, 2, 3, 4, 5, 6, 7, 13})
    for (int64_t K : {1, 3, 37})
      for (int64_t N : {int64_t(1), kPanel - 1, kPanel, kPanel + 1, 3 * kPanel + 5})
        for (bool trans : {false, true})
          for (bool accumulate : {false, true}) {
            CAPTURE(M);
            CAPTURE(K);
            CAPTURE(N);
            CAPTURE(trans);
            CAPTURE(accumulate);
            const int64_t lda = K + 3, ld = (trans ? K : N) + 2, ldc = N + 4;
            const std::vector<real> A = random_buffer(M * lda, seed++);
            const std::vector<real> src = random_buffer((trans ? N : K) * ld, seed++);
            std::vector<real> C = random_buffer(M * ldc, seed++), want = C;
            gemm_packed(M, A.data(), lda, pack_b(src.data(), trans, ld, K, N), accumulate,
                        C.data(), ldc);
            gemm_packed_naive(M, A.data(), lda, src.data(), trans, ld, K, N, accumulate,
                              want.data(), ldc);
            double worst = 0;
            bool padding_kept = true;  // the columns past N in each row are not written
            for (int64_t i = 0; i < M; ++i) {
              for (int64_t j = 0; j < N; ++j)
                worst = std::max(worst, std::abs(double(C[i * ldc + j] - want[i * ldc + j])));
              for (int64_t j = N; j < ldc; ++j) padding_kept &= C[i * ldc + j] == want[i * ldc + j];
            }
            CHECK(worst <= 1e-4 * std::sqrt(double(K)));
            CHECK(padding_kept);
          }
}

TEST_CASE("gemm_packed: K = 0 writes zeros (=) or leaves C (+=); M = 0 and N = 0 do nothing") {
  const std::vector<real> A(6), src(9);  // A up to (2, 3), src up to (3, 3)
  std::vector<real> C(6, real(2));
  gemm_packed(2, A.data(), 0, pack_b(src.data(), false, 3, 0, 3), true, C.data(), 3);
  CHECK(C == std::vector<real>(6, real(2)));
  gemm_packed(2, A.data(), 0, pack_b(src.data(), false, 3, 0, 3), false, C.data(), 3);
  CHECK(C == std::vector<real>(6, real(0)));
  C.assign(6, real(2));
  gemm_packed(0, A.data(), 3, pack_b(src.data(), false, 3, 3, 3), false, C.data(), 3);
  gemm_packed(2, A.data(), 3, pack_b(src.data(), false, 3, 3, 0), false, C.data(), 3);
  CHECK(C == std::vector<real>(6, real(2)));
}

TEST_CASE("for_each_row_block: blocks of at most 6 rows, at least 3 once M >= 4, each row once") {
  for (int64_t M : {1, 5, 6, 7, 13, 32, 45}) {
    CAPTURE(M);
    int64_t next = 0;
    for_each_row_block(M, [&](int64_t first, int64_t rows) {
      CHECK(first == next);
      CHECK(rows <= 6);
      if (M >= 4) CHECK(rows >= 3);
      next += rows;
    });
    CHECK(next == M);
  }
}
