// cpu_avx512.cpp - the kernels of level avx512 (core/cpu.h), compiled with that level's flags
// (Makefile: files named *_avx2.cpp, *_avx512.cpp and *_avx512_bf16.cpp get theirs; *_v2.cpp
// the library's own).
#include "packed_gemm_kernel.inc"

namespace heed::detail {

extern const CpuKernels kCpuKernelsAvx512;
const CpuKernels kCpuKernelsAvx512 = {CpuLevel::avx512, gemm_packed_level<64, 2, 6>, nullptr};

}  // namespace heed::detail
