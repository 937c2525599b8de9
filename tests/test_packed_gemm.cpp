// test_packed_gemm.cpp - core/packed_gemm.h: gemm_packed (B packed by pack_b, register-
// blocked kernel) against gemm_naive, the plain triple loop: every row-block height the kernel
// has (1..6 and more than 6 rows), whole and partial panels, A and B plain or transposed,
// = and +=, alpha, and leading dimensions wider than the rows (the recurrent layers read one
// step of a (B, T, .) buffer; flash attention one head of a (B, T, H*D) tensor). Every CPU
// level's kernel (core/cpu.h) the machine supports is run, each called from its table, and the
// level selection rule (HEED_CPU) is checked.
#include <limits>
#include <random>
#include <vector>

#include <heed/core/blas.h>
#include <heed/core/cpu.h>
#include <heed/core/packed_gemm.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;

using heed::test::random_buffer;

TEST_CASE("gemm_packed == gemm_naive at every CPU level: row blocks 1..13, partial panels, A and B either way, = and +=") {
  PackedB packed;  // refilled by every case, keeping its buffer
  for (CpuLevel level : cpu_supported_levels()) {
    const CpuKernels& kernels = cpu_kernels_at(level);
    const char* level_name = cpu_level_name(level);
    CAPTURE(level_name);
    CHECK(kernels.level == level);
    unsigned seed = 7;
    // N: one partial panel, one, two (the AVX-512 kernel's pair), a pair with a partial second,
    // a pair and a partial third
    for (int64_t M : {1, 2, 3, 4, 5, 6, 7, 13})
      for (int64_t K : {1, 3, 37})
        for (int64_t N : {int64_t(1), kPanel - 1, kPanel, kPanel + 1, 2 * kPanel, 3 * kPanel + 5})
          for (bool trans_a : {false, true})
            for (bool trans_b : {false, true})
              for (real beta : {real(0), real(1)})
                for (real alpha : {real(1), real(0.375)}) {
                CAPTURE(M);
                CAPTURE(K);
                CAPTURE(N);
                CAPTURE(trans_a);
                CAPTURE(trans_b);
                CAPTURE(beta);
                CAPTURE(alpha);
                const int64_t lda = (trans_a ? M : K) + 3, ldb = (trans_b ? K : N) + 2, ldc = N + 4;
                const std::vector<real> A = random_buffer((trans_a ? K : M) * lda, seed++);
                const std::vector<real> B = random_buffer((trans_b ? N : K) * ldb, seed++);
                std::vector<real> C = random_buffer(M * ldc, seed++), want = C;
                if (beta == 0)  // never read when writing (=), as BLAS with beta 0
                  for (int64_t i = 0; i < M; ++i)
                    std::fill_n(C.begin() + i * ldc, N, std::numeric_limits<real>::quiet_NaN());
                pack_b(packed, B.data(), trans_b, ldb, K, N);
                kernels.gemm_packed(trans_a, M, A.data(), lda, packed.panels(), K * kPanel, K, N, alpha,
                                    beta == 1, C.data(), ldc);
                gemm_naive(trans_a, trans_b, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta,
                           want.data(), ldc);
                bool close = true, padding_kept = true;  // past N, each row is not written
                for (int64_t i = 0; i < M; ++i) {
                  for (int64_t j = 0; j < N; ++j)  // written as "<=" so that a NaN fails it
                    close &= std::abs(double(C[i * ldc + j] - want[i * ldc + j])) <=
                             1e-4 * std::sqrt(double(K));
                  for (int64_t j = N; j < ldc; ++j) padding_kept &= C[i * ldc + j] == want[i * ldc + j];
                }
                CHECK(close);
                CHECK(padding_kept);
              }
  }
}

TEST_CASE("cpu levels: HEED_CPU forces a level no higher than the machine's; anything else is an error") {
  using L = CpuLevel;
  CHECK(cpu_select_level(nullptr, L::avx2) == L::avx2);  // unset: the machine's best
  CHECK(cpu_select_level("", L::avx512) == L::avx512);
  CHECK(cpu_select_level("v2", L::avx512) == L::v2);
  CHECK(cpu_select_level("avx2", L::avx2) == L::avx2);
  CHECK(cpu_select_level("avx512", L::avx512) == L::avx512);
  CHECK(cpu_select_level("avx512", L::avx512_bf16) == L::avx512);
  CHECK(cpu_select_level("avx512_bf16", L::avx512_bf16) == L::avx512_bf16);
  CHECK(cpu_select_level(nullptr, L::avx512_bf16) == L::avx512_bf16);
  CHECK_THROWS_WITH_AS(cpu_select_level("avx512_bf16", L::avx512),
                       "HEED_CPU: level 'avx512_bf16' is above what this CPU supports (avx512)", Error);
  CHECK_THROWS_WITH_AS(cpu_select_level("avx512", L::avx2),
                       "HEED_CPU: level 'avx512' is above what this CPU supports (avx2)", Error);
  CHECK_THROWS_WITH_AS(cpu_select_level("avx2", L::v2),
                       "HEED_CPU: level 'avx2' is above what this CPU supports (v2)", Error);
  CHECK_THROWS_WITH_AS(cpu_select_level("AVX2", L::avx512),
                       "HEED_CPU: unknown level 'AVX2' (v2, avx2, avx512 or avx512_bf16)", Error);
  CHECK_THROWS_WITH_AS(cpu_select_level("sse", L::avx512),
                       "HEED_CPU: unknown level 'sse' (v2, avx2, avx512 or avx512_bf16)", Error);
  // the process's level: the machine's or the forced one, named by cpu_capability()
  CHECK(cpu_level() <= cpu_machine_level());
  CHECK(std::string(cpu_capability()) == cpu_level_name(cpu_level()));
  CHECK(cpu_kernels().level == cpu_level());
  const char* forced = std::getenv("HEED_CPU");
  if (forced != nullptr && *forced != '\0') CHECK(std::string(cpu_capability()) == forced);
  const std::vector<CpuLevel> levels = cpu_supported_levels();
  CHECK(levels.front() == L::v2);
  CHECK(levels.back() == cpu_machine_level());
  if (cpu_machine_level() < L::avx512)
    CHECK_THROWS_AS(cpu_kernels_at(L::avx512), Error);
  if (cpu_machine_level() < L::avx512_bf16)
    CHECK_THROWS_AS(cpu_kernels_at(L::avx512_bf16), Error);
  // the bf16 dot-product kernel exists at avx512_bf16 only, in the float build
  for (CpuLevel level : levels)
    CHECK((cpu_kernels_at(level).gemm_packed_bf16 != nullptr) == (level == L::avx512_bf16 && sizeof(real) == 4));
}

TEST_CASE("gemm_packed reads A in place or transposed at an LSTM step's shape, as gemm_naive") {
  const int64_t M = 32, K = 256, N = 100;  // an LSTM step's shape, one thread's columns
  const std::vector<real> A = random_buffer(M * K, 1), At = random_buffer(K * M, 2),
                          W = random_buffer(N * K, 3);
  const PackedB w = pack_b(W.data(), true, K, K, N);  // B = W^T (K, N)
  for (bool trans_a : {false, true}) {
    CAPTURE(trans_a);
    const std::vector<real>& src = trans_a ? At : A;
    std::vector<real> C(M * N, real(1)), want = C;
    gemm_packed(trans_a, M, src.data(), trans_a ? M : K, w, real(2), true, C.data(), N);
    gemm_naive(trans_a, true, M, N, K, real(2), src.data(), trans_a ? M : K, W.data(), K, 1,
               want.data(), N);
    bool close = true;  // "<=": a NaN fails it
    for (int64_t i = 0; i < M * N; ++i)
      close &= std::abs(double(C[i] - want[i])) <= 1e-4 * std::sqrt(double(K));
    CHECK(close);
  }
}

TEST_CASE("gemm_packed: K = 0 writes zeros (=) or leaves C (+=); M = 0 and N = 0 do nothing") {
  const std::vector<real> A(6), src(9);  // A up to (2, 3), src up to (3, 3)
  std::vector<real> C(6, real(2));
  gemm_packed(false, 2, A.data(), 0, pack_b(src.data(), false, 3, 0, 3), 1, true, C.data(), 3);
  CHECK(C == std::vector<real>(6, real(2)));
  gemm_packed(false, 2, A.data(), 0, pack_b(src.data(), false, 3, 0, 3), 1, false, C.data(), 3);
  CHECK(C == std::vector<real>(6, real(0)));
  C.assign(6, real(2));
  gemm_packed(false, 0, A.data(), 3, pack_b(src.data(), false, 3, 3, 3), 1, false, C.data(), 3);
  gemm_packed(false, 2, A.data(), 3, pack_b(src.data(), false, 3, 3, 0), 1, false, C.data(), 3);
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
