// cpu_v2.cpp - the kernels of level v2 (core/cpu.h), compiled with that level's flags
// (Makefile: files named *_avx2.cpp, *_avx512.cpp and *_avx512_bf16.cpp get theirs; *_v2.cpp
// the library's own).
#include "packed_gemm_kernel.inc"

namespace heed::detail {

extern const CpuKernels kCpuKernelsV2;
const CpuKernels kCpuKernelsV2 = {CpuLevel::v2, gemm_packed_level<16, 1, 3>, nullptr};

}  // namespace heed::detail
