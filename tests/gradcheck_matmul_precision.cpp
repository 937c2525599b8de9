// gradcheck_matmul_precision.cpp - in the double build the matmul precision changes nothing
// (core/matmul_precision.h): under "medium" gemm() and the packed GEMM give the same bits as
// under "highest", and the gradient checks of every op run at whatever setting is in force.
#include <vector>

#include <heed/core/blas.h>
#include <heed/core/matmul_precision.h>
#include <heed/core/packed_gemm.h>
#include "helpers.h"

using namespace heed;

TEST_CASE("double build: medium matmul precision leaves gemm and the packed GEMM exact") {
  const int64_t M = 9, N = 21, K = 33;
  const std::vector<real> A = heed::test::random_buffer(M * K, 1), B = heed::test::random_buffer(K * N, 2);
  std::vector<real> exact(M * N), medium(M * N), packed_exact(M * N), packed_medium(M * N);
  gemm(false, false, M, N, K, 1, A.data(), K, B.data(), N, 0, exact.data(), N);
  gemm_packed(false, M, A.data(), K, pack_b(B.data(), false, N, K, N), 1, false, packed_exact.data(), N);
  {
    MatmulPrecisionGuard guard("medium");
    CHECK(get_float32_matmul_precision() == "medium");
    CHECK(!gemm_rounds_to_bf16());
    gemm(false, false, M, N, K, 1, A.data(), K, B.data(), N, 0, medium.data(), N);
    const PackedB p = pack_b(B.data(), false, N, K, N);
    CHECK(!p.bf16);
    gemm_packed(false, M, A.data(), K, p, 1, false, packed_medium.data(), N);
  }
  CHECK(exact == medium);
  CHECK(packed_exact == packed_medium);
}
