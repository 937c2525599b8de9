// test_matmul_precision.cpp - core/matmul_precision.h: the setting and its guard, bfloat16
// rounding, and every GEMM path under "medium" against the reference of its definition (the
// inputs rounded to bfloat16, the products summed in double: gemm_naive on rounded copies):
// gemm() (BLAS: the general product and the one-row gemv) and the packed GEMM at every CPU
// level the machine has (a note names the levels it lacks).
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/autograd/ops/attention/scaled_dot_product.h>
#include <heed/core/blas.h>
#include <heed/core/cpu.h>
#include <heed/core/matmul_precision.h>
#include <heed/core/packed_gemm.h>
#include "helpers.h"
#include "packed_medium_check.h"

using namespace heed;

using heed::test::allclose;
using heed::test::max_block_diff;
using heed::test::random_buffer;
using heed::test::rounded_to_bf16;

namespace {
unsigned bits(float x) {
  unsigned u;
  std::memcpy(&u, &x, 4);
  return u;
}

}  // namespace

TEST_CASE("matmul precision: highest by default; set and get by name; a bad name is an error that changes nothing") {
  CHECK(get_float32_matmul_precision() == "highest");
  set_float32_matmul_precision("medium");
  CHECK(get_float32_matmul_precision() == "medium");
  CHECK(matmul_precision() == MatmulPrecision::medium);
  set_float32_matmul_precision("high");
  CHECK(get_float32_matmul_precision() == "high");
  CHECK_THROWS_WITH_AS(set_float32_matmul_precision("fast"),
                       "set_float32_matmul_precision: unknown precision 'fast' (highest, high or medium)",
                       Error);
  CHECK(get_float32_matmul_precision() == "high");
  set_float32_matmul_precision("highest");
  CHECK(!gemm_rounds_to_bf16());
}

TEST_CASE("MatmulPrecisionGuard restores the previous setting, also when an exception leaves its scope; guards nest") {
  REQUIRE(get_float32_matmul_precision() == "highest");
  {
    MatmulPrecisionGuard outer("medium");
    CHECK(gemm_rounds_to_bf16());
    {
      MatmulPrecisionGuard inner("high");
      CHECK(inner.previous() == MatmulPrecision::medium);
      CHECK(get_float32_matmul_precision() == "high");
    }
    CHECK(get_float32_matmul_precision() == "medium");
  }
  CHECK(get_float32_matmul_precision() == "highest");
  try {
    MatmulPrecisionGuard guard("medium");
    fail("test", "thrown inside the guard's scope");
  } catch (const Error&) {
  }
  CHECK(get_float32_matmul_precision() == "highest");
  CHECK_THROWS_WITH_AS(MatmulPrecisionGuard("bf16"),
                       "MatmulPrecisionGuard: unknown precision 'bf16' (highest, high or medium)", Error);
  CHECK(get_float32_matmul_precision() == "highest");
}

TEST_CASE("round_to_bf16: nearest, ties to even; infinities kept, NaN stays NaN, past the largest bf16 is infinity") {
  CHECK(round_to_bf16(1.0f) == 1.0f);
  CHECK(round_to_bf16(1.0f + 0x1p-8f) == 1.0f);                  // tie: to the even 1
  CHECK(round_to_bf16(1.0f + 3 * 0x1p-8f) == 1.0f + 0x1p-6f);   // tie: to the even 1 + 2^-6
  CHECK(round_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 1.0f + 0x1p-7f);  // above the tie: up
  CHECK(round_to_bf16(-3.0f) == -3.0f);
  CHECK(round_to_bf16(0.1f) == 0.10009765625f);
  CHECK(round_to_bf16(INFINITY) == INFINITY);
  CHECK(round_to_bf16(-INFINITY) == -INFINITY);
  CHECK(round_to_bf16(std::numeric_limits<float>::max()) == INFINITY);
  CHECK(std::isnan(round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  float snan_low;  // a NaN whose payload is only in the low 16 bits: truncating would make it inf
  const unsigned snan_bits = 0x7f800001u;
  std::memcpy(&snan_low, &snan_bits, 4);
  CHECK(std::isnan(round_to_bf16(snan_low)));
  CHECK(std::signbit(round_to_bf16(-std::numeric_limits<float>::quiet_NaN())));
  // the vector form is the scalar one, bit for bit, over values of every kind
  std::vector<float> x = {0.0f, -0.0f, 1e-40f, -1e-40f, INFINITY, snan_low, 65504.0f, 3.3895e38f};
  for (float v : random_buffer(997, 3)) x.push_back(v * 1000);
  std::vector<float> y(x.size());
  round_to_bf16(x.data(), y.data(), long(x.size()));
  bool same = true, low_zero = true;
  for (size_t i = 0; i < x.size(); ++i) {
    same &= bits(y[i]) == bits(round_to_bf16(x[i]));
    low_zero &= (bits(y[i]) & 0xffffu) == 0;
  }
  CHECK(same);
  CHECK(low_zero);
}

TEST_CASE("gemm under medium == the bf16-rounded inputs' product summed in double (BLAS gemm and the one-row gemv); high == highest") {
  unsigned seed = 11;
  for (int64_t M : {1, 5, 33})
    for (int64_t K : {1, 40, 300})
      for (int64_t N : {1, 17, 70})
        for (bool ta : {false, true})
          for (bool tb : {false, true})
            for (real beta : {real(0), real(1)}) {
              CAPTURE(M);
              CAPTURE(K);
              CAPTURE(N);
              CAPTURE(ta);
              CAPTURE(tb);
              CAPTURE(beta);
              const int64_t lda = (ta ? M : K) + 2, ldb = (tb ? K : N) + 3, ldc = N + 1;
              const std::vector<real> A = random_buffer((ta ? K : M) * lda, seed++);
              const std::vector<real> B = random_buffer((tb ? N : K) * ldb, seed++);
              const std::vector<real> C0 = random_buffer(M * ldc, seed++);
              std::vector<real> medium = C0, highest = C0, high = C0, want = C0;
              {
                MatmulPrecisionGuard g("medium");
                gemm(ta, tb, M, N, K, real(0.5), A.data(), lda, B.data(), ldb, beta, medium.data(), ldc);
              }
              {
                MatmulPrecisionGuard g("high");
                gemm(ta, tb, M, N, K, real(0.5), A.data(), lda, B.data(), ldb, beta, high.data(), ldc);
              }
              gemm(ta, tb, M, N, K, real(0.5), A.data(), lda, B.data(), ldb, beta, highest.data(), ldc);
              gemm_naive(ta, tb, M, N, K, real(0.5), rounded_to_bf16(A).data(), lda, rounded_to_bf16(B).data(), ldb,
                         beta, want.data(), ldc);
              // float32 sums of K products against double ones
              CHECK(max_block_diff(medium, want, M, N, ldc) <= 2e-5 * std::sqrt(double(K)));
              CHECK(max_block_diff(high, highest, M, N, ldc) == 0);
              if (K >= 40 && M * N >= 17)  // and the rounding is there: fp32 inputs give other sums
                CHECK(max_block_diff(highest, want, M, N, ldc) > 1e-3);
              for (int64_t i = 0; i < M; ++i)  // the padding past N is never written
                CHECK(medium[i * ldc + N] == C0[i * ldc + N]);
            }
}

TEST_CASE("gemm_packed under medium == the bf16-rounded inputs' product summed in double, at every CPU level: A in blocks past 48 rows and 256 deep") {
  for (CpuLevel level : {CpuLevel::v2, CpuLevel::avx2, CpuLevel::avx512, CpuLevel::avx512_bf16}) {
    if (level > cpu_machine_level()) {
      MESSAGE("CPU level " << std::string(cpu_level_name(level)) << " is not available on this machine: its packed GEMM under \"medium\" was not run");
      continue;
    }
    const char* level_name = cpu_level_name(level);
    CAPTURE(level_name);
    heed::test::check_packed_medium(cpu_kernels_at(level));
  }
  if (cpu_machine_level() == CpuLevel::avx512_bf16)
    MESSAGE("level avx512_bf16 ran its packed GEMM on vdpbf16ps; the levels below on float32 FMAs");
  else
    MESSAGE("this CPU has no AVX512_BF16: the packed GEMM's vdpbf16ps kernel did not run (test_packed_gemm_bf16 runs it on a model of the instruction)");
}

// The tiled form rounds exp(S - running max) before normalising, the composed one the softmax
// after it: the two agree to bf16's tolerance, not bit for bit.
TEST_CASE("medium reaches a decoding step: flash attention's one-row products (gemv on the cache) are rounded, to bf16 tolerance of the composed attention under medium") {
  const Tensor q = randn({2, 3, 1, 16}), k = randn({2, 3, 40, 16}), v = randn({2, 3, 40, 16});
  const AttentionMask causal = AttentionMask().causal();
  const Tensor exact = flash_attention(q, k, v, causal);
  MatmulPrecisionGuard medium("medium");
  const Tensor flash = flash_attention(q, k, v, causal, {}, FlashOptions().cols(16));  // 3 key tiles
  const Tensor composed = scaled_dot_product_attention(q, k, v, causal).context;
  CHECK(allclose(flash, composed, 0x1p-6, 0x1p-6));
  CHECK(!allclose(flash, exact, 1e-4, 1e-4));  // and not the fp32 product
}
