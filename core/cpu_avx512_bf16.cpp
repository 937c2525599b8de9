// cpu_avx512_bf16.cpp - the kernels of level avx512_bf16 (core/cpu.h), compiled with that
// level's flags (Makefile: AVX512_FLAGS and -mavx512bf16): the AVX-512 float kernel, and the
// "medium" one on vdpbf16ps (core/packed_gemm_bf16_kernel.inc).
#include <immintrin.h>

#include "packed_gemm_bf16_kernel.inc"  // and the float kernel of packed_gemm_kernel.inc

namespace heed {
namespace {

#ifndef HEED_DOUBLE
// the instruction itself: 16 lanes of (acc + a1 * b1) + a0 * b0 over bf16 pairs
struct Vdpbf16ps {
  static vec16 dot(vec16 acc, u32x16 a, u32x16 b) {
    return (vec16)_mm512_dpbf16_ps((__m512)acc, (__m512bh)a, (__m512bh)b);
  }
};
constexpr auto kGemmPackedBf16 = gemm_packed_bf16_level<Vdpbf16ps>;
#else
constexpr decltype(CpuKernels::gemm_packed_bf16) kGemmPackedBf16 = nullptr;
#endif

}  // namespace
}  // namespace heed

namespace heed::detail {

extern const CpuKernels kCpuKernelsAvx512Bf16;
const CpuKernels kCpuKernelsAvx512Bf16 = {CpuLevel::avx512_bf16, gemm_packed_level<64, 2, 6>,
                                          kGemmPackedBf16};

}  // namespace heed::detail
