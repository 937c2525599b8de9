// packed_medium_check.h - the packed GEMM under "medium" against its definition, for one table
// of kernels (core/cpu.h): the inputs rounded to bfloat16, the products summed in double
// (gemm_naive on rounded copies). test_matmul_precision runs it at every CPU level the machine
// has; test_packed_gemm_bf16 on a model of vdpbf16ps.
#pragma once
#include <cmath>
#include <vector>

#include <heed/core/blas.h>
#include <heed/core/cpu.h>
#include <heed/core/matmul_precision.h>
#include <heed/core/packed_gemm.h>

namespace heed::test {

inline std::vector<real> rounded_to_bf16(std::vector<real> v) {
  for (real& x : v) x = real(round_to_bf16(float(x)));
  return v;
}

// max |got - want| over the (M, N) block of C, leading dim ldc (a NaN gives infinity)
inline double max_block_diff(const std::vector<real>& got, const std::vector<real>& want, int64_t M,
                             int64_t N, int64_t ldc) {
  double d = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      const double e = std::fabs(double(got[i * ldc + j]) - double(want[i * ldc + j]));
      d = std::isnan(e) ? INFINITY : std::max(d, e);
    }
  return d;
}

// Every case: M from 1 row to past 48 (A rounded in blocks of rows), K odd and even and past 256
// (blocks of depth), N partial and whole panels, A and B each transposed or not, = and +=; the
// padding past N never written; packed under "highest", the same call is the float32 product.
inline void check_packed_medium(const CpuKernels& kernels) {
  unsigned seed = 5;
  PackedB packed;
  for (int64_t M : {1, 7, 50, 101})
    for (int64_t K : {1, 3, 256, 301, 600})
      for (int64_t N : {int64_t(5), kPanel, 2 * kPanel + 3, 3 * kPanel + 7})
        for (bool ta : {false, true})
          for (bool tb : {false, true})
            for (bool accumulate : {false, true}) {
              CAPTURE(M);
              CAPTURE(K);
              CAPTURE(N);
              CAPTURE(ta);
              CAPTURE(tb);
              CAPTURE(accumulate);
              const int64_t lda = (ta ? M : K) + 1, ldb = (tb ? K : N) + 2, ldc = N + 3;
              const std::vector<real> A = random_buffer((ta ? K : M) * lda, seed++);
              const std::vector<real> B = random_buffer((tb ? N : K) * ldb, seed++);
              const std::vector<real> C0 = random_buffer(M * ldc, seed++);
              std::vector<real> C = C0, want = C0;
              {
                MatmulPrecisionGuard g("medium");
                pack_b(packed, B.data(), tb, ldb, K, N);
              }
              REQUIRE(packed.bf16);
              gemm_packed_at(kernels, ta, M, A.data(), lda, packed, real(0.75), accumulate, C.data(), ldc);
              gemm_naive(ta, tb, M, N, K, real(0.75), rounded_to_bf16(A).data(), lda,
                         rounded_to_bf16(B).data(), ldb, accumulate ? 1 : 0, want.data(), ldc);
              CHECK(max_block_diff(C, want, M, N, ldc) <= 2e-5 * std::sqrt(double(K)));
              for (int64_t i = 0; i < M; ++i) CHECK(C[i * ldc + N] == C0[i * ldc + N]);
              pack_b(packed, B.data(), tb, ldb, K, N);
              REQUIRE(!packed.bf16);
              std::vector<real> exact = C0;
              gemm_packed_at(kernels, ta, M, A.data(), lda, packed, real(0.75), accumulate, exact.data(), ldc);
              if (K >= 256) CHECK(max_block_diff(exact, want, M, N, ldc) > 1e-3);
            }
}

}  // namespace heed::test
