// test_packed_gemm_bf16.cpp - the packed GEMM's bf16 dot-product kernel
// (core/packed_gemm_bf16_kernel.inc, level avx512_bf16 of core/cpu.h) on any CPU.
//
// The kernel is written over its one instruction (Dot::dot). Here it is compiled with a scalar
// model of vdpbf16ps (Intel SDM: per lane, acc + a1 * b1 first, then + a0 * b0, each sum rounded
// to float32, bf16 denormals read as zero and denormal results flushed), so the pairing of k,
// the odd tails, the partial panels and the row blocks are tested here even on a CPU without
// AVX512_BF16. On a CPU with it, the library's kernel on the real instruction runs against the
// model and the reference too (and test_matmul_precision runs it at level avx512_bf16).
#include <cmath>
#include <cstring>
#include <vector>

#include <heed/core/blas.h>
#include <heed/core/cpu.h>
#include <heed/core/matmul_precision.h>
#include <heed/core/packed_gemm.h>
#include "helpers.h"
#include "packed_medium_check.h"

// the kernel's functions pass 64-byte vectors; here, compiled without AVX-512, GCC warns that
// such a function's calling convention differs from an AVX-512 file's. They are in an unnamed
// namespace, called from this file only.
#pragma GCC diagnostic ignored "-Wpsabi"
#include <heed/core/packed_gemm_bf16_kernel.inc>

using namespace heed;
using heed::test::random_buffer;

namespace {

float from_bits(unsigned u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
float flush(float x) { return std::fabs(x) < 1.17549435e-38f ? std::copysign(0.0f, x) : x; }
float bf16(unsigned half) { return flush(from_bits(half << 16)); }  // a bf16's value, DAZ

// vdpbf16ps, one lane at a time
struct ModelDot {
  static vec16 dot(vec16 acc, u32x16 a, u32x16 b) {
    for (int l = 0; l < 16; ++l) {
      float s = flush(acc[l]);
      s = flush(s + bf16(a[l] >> 16) * bf16(b[l] >> 16));
      s = flush(s + bf16(a[l] & 0xffffu) * bf16(b[l] & 0xffffu));
      acc[l] = s;
    }
    return acc;
  }
};

unsigned pair(float x0, float x1) {  // two bf16 values (x0 low)
  unsigned u0, u1;
  std::memcpy(&u0, &x0, 4);
  std::memcpy(&u1, &x1, 4);
  return u0 >> 16 | (u1 & 0xffff0000u);
}

// the table of the level in use with its bf16 kernel replaced by the model's
CpuKernels model_kernels() {
  CpuKernels k = cpu_kernels();
  k.gemm_packed_bf16 = gemm_packed_bf16_level<ModelDot>;
  return k;
}

}  // namespace

TEST_CASE("the model of vdpbf16ps: the high pair's product first, each sum rounded to float32, denormals flushed") {
  const float big = 16777216.0f;  // 2^24: 2^24 + 1 is not a float32
  vec16 acc = vec16{} + 1.0f;
  const u32x16 a = u32x16{} + pair(1.0f, big), b = u32x16{} + pair(1.0f, 1.0f);
  // (1 + 2^24) rounds to 2^24 (ties to even), + 1 rounds to 2^24 again; the other order
  // would give (1 + 1) + 2^24 = 2^24 + 2
  CHECK(ModelDot::dot(acc, a, b)[3] == big);
  acc = vec16{} + 0.5f;
  CHECK(ModelDot::dot(acc, u32x16{} + pair(2.0f, 3.0f), u32x16{} + pair(5.0f, 7.0f))[15] == 31.5f);
  const float tiny = 1e-20f;  // tiny * tiny = 1e-40: a float32 denormal, flushed
  CHECK(ModelDot::dot(vec16{}, u32x16{} + pair(round_to_bf16(tiny), 0.0f),
                      u32x16{} + pair(round_to_bf16(tiny), 0.0f))[0] == 0.0f);
}

TEST_CASE("gemm_packed under medium on the bf16 dot-product kernel (model of vdpbf16ps) == the bf16-rounded inputs' product summed in double: odd K, partial panels, row blocks, A in blocks past 48 rows and 256 deep") {
  heed::test::check_packed_medium(model_kernels());
}

TEST_CASE("the bf16 dot-product kernel keeps Inf and NaN: a NaN in A or B reaches C, as in the float kernel") {
  const CpuKernels kernels = model_kernels();
  const int64_t M = 3, K = 5, N = 20;
  std::vector<real> A = random_buffer(M * K, 1), B = random_buffer(K * N, 2);
  A[1 * K + 4] = NAN;  // row 1, the odd tail
  B[2 * N + 17] = INFINITY;  // column 17, in the partial panel
  PackedB packed;
  {
    MatmulPrecisionGuard g("medium");
    pack_b(packed, B.data(), false, N, K, N);
  }
  std::vector<real> C(M * N, 0);
  gemm_packed_at(kernels, false, M, A.data(), K, packed, 1, false, C.data(), N);
  for (int64_t j = 0; j < N; ++j) CHECK(std::isnan(C[1 * N + j]));
  CHECK(std::isinf(C[0 * N + 17]));
  CHECK(std::isfinite(C[0 * N + 16]));
}

TEST_CASE("on a CPU with AVX512_BF16, the library's vdpbf16ps kernel agrees with the model and the reference") {
  if (cpu_machine_level() < CpuLevel::avx512_bf16) {
    MESSAGE("this CPU has no AVX512_BF16 (kernels in use: " << std::string(cpu_capability())
                                                             << "): the kernel on the real instruction was not run");
    return;
  }
  const CpuKernels& real_kernels = cpu_kernels_at(CpuLevel::avx512_bf16);
  const CpuKernels model = model_kernels();
  int identical = 0, cases = 0;
  unsigned seed = 40;
  for (int64_t M : {1, 6, 33})
    for (int64_t K : {1, 7, 64, 513})
      for (int64_t N : {int64_t(3), 2 * kPanel, 5 * kPanel + 1}) {
        CAPTURE(M);
        CAPTURE(K);
        CAPTURE(N);
        const std::vector<real> A = random_buffer(M * K, seed++), B = random_buffer(K * N, seed++);
        PackedB packed;
        {
          MatmulPrecisionGuard g("medium");
          pack_b(packed, B.data(), false, N, K, N);
        }
        std::vector<real> got(M * N), modelled(M * N), want(M * N);
        gemm_packed_at(real_kernels, false, M, A.data(), K, packed, 1, false, got.data(), N);
        gemm_packed_at(model, false, M, A.data(), K, packed, 1, false, modelled.data(), N);
        gemm_naive(false, false, M, N, K, 1, heed::test::rounded_to_bf16(A).data(), K, heed::test::rounded_to_bf16(B).data(), N, 0, want.data(), N);
        CHECK(heed::test::max_block_diff(got, want, M, N, N) <= 2e-5 * std::sqrt(double(K)));
        CHECK(heed::test::max_block_diff(got, modelled, M, N, N) <= 2e-5 * std::sqrt(double(K)));
        identical += got == modelled;
        ++cases;
      }
  MESSAGE("vdpbf16ps ran; its products were bit-identical to the model's in " << identical << " of " << cases << " shapes");
}
