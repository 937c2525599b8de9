// gemm_engine.h - which library runs heed's GEMMs (core/blas.h), chosen once per process.
//
//   engine    what it is                                          used
//   onednn    oneDNN's matmul primitive (Intel's deep-learning    float build, by default
//             library, the engine under PyTorch's fast CPU paths;
//             Debian libdnnl-dev). Picks its kernels from the
//             CPU's features (AVX2, AVX-512, AVX512_BF16, AMX).
//   openblas  OpenBLAS's cblas_sgemm / cblas_dgemm and gemv.      the double build (oneDNN has
//             Picks its kernels from the CPU's model number: a    no float64 matmul); or asked
//             model newer than its table gets generic SSE3 ones.  for with HEED_GEMM=openblas
//
// The environment variable HEED_GEMM=onednn|openblas chooses at the first GEMM; any other
// value is a heed::Error there. set_gemm_engine() changes it later (tests run one product
// through both). In the double build the engine is always OpenBLAS, whatever is asked.
//
// Never a tenth of the machine silently: OpenBLAS names the kernels it picked
// (openblas_core()). When they are below AVX2 (Prescott, Nehalem, Sandybridge...) on a CPU
// that heed's own detection (core/cpu.h, from cpuid features) places at AVX2 or AVX-512,
// OpenBLAS has misjudged the CPU. The float build then uses oneDNN even where OpenBLAS was
// asked for, and says so once on stderr; the double build, which cannot, says so once with
// the fix (OPENBLAS_CORETYPE=Haswell or SkylakeX). gemm_backend() says the same.
//
//   std::printf("%s\n", heed::gemm_backend().c_str());
//   // oneDNN 2.6.3 (f32 matmul gemm:jit; bf16 matmul: none on this CPU, "medium" rounds ...
#pragma once
#include <string>

#include "cpu.h"

namespace heed {

enum class GemmEngine { openblas = 0, onednn = 1 };

// "openblas" or "onednn"
const char* gemm_engine_name(GemmEngine engine);

// The engine in use (chosen at the first call from HEED_GEMM; see above).
GemmEngine gemm_engine();
// Use `engine` from now on, for every thread. In the double build, and for openblas when
// OpenBLAS's kernels are below the CPU's level, the engine actually used stays as the rule
// above says (gemm_engine() tells). Call it between GEMMs, not during one.
void set_gemm_engine(GemmEngine engine);

// One line naming the engine, its version, the kernels it runs on this CPU and how "medium"
// (core/matmul_precision.h) multiplies: on oneDNN's bf16 matmul where the CPU has bf16 units,
// else with float32 FMAs on rounded values; and how heed's packed GEMM (core/packed_gemm.h)
// multiplies under "medium": on vdpbf16ps at level avx512_bf16, else with float32 FMAs.
std::string gemm_backend();

// The kernels OpenBLAS picked for this CPU ("Haswell", "SkylakeX", "Prescott"...), and the
// x86-64 level of those kernels (v2 for every pre-AVX2 kernel set).
const char* openblas_core();
CpuLevel openblas_core_level(const char* core);
// True when OpenBLAS's kernels are below AVX2 while heed's own run at AVX2 or above
// (cpu_level(): the CPU's level, or the one HEED_CPU forced).
bool openblas_misdetected();

// The selection rule, separate from the process's one selection so that it can be tested:
// `asked` is HEED_GEMM's value (nullptr or "" when unset). heed::Error for an unknown name.
GemmEngine gemm_select_engine(const char* asked, bool openblas_misdetected);

}  // namespace heed
