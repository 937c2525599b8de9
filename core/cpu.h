// cpu.h - which x86-64 level heed's hot kernels run at: one table of kernel variants, one
// selection at first use.
//
// libheed.a is compiled for x86-64-v2 (SSE4.2: every x86-64 CPU since 2009), so it runs on
// any machine it is copied to. The kernels where the vector width pays (the packed GEMM
// micro-kernel under flash attention and the recurrent layers, core/packed_gemm.h) are
// compiled once more per level, each in its own file with its own flags (core/cpu_avx2.cpp
// with -march=x86-64-v3, core/cpu_avx512.cpp with -march=x86-64-v4; Makefile), and the
// table of the best level the CPU has is chosen once, from cpuid, the first time a kernel
// is asked for. This is ATen's DispatchStub (one stub per kernel, `cpu_capability`,
// ATEN_CPU_CAPABILITY to force a level) at heed's size: one struct of function pointers.
//
//   level    instructions                           GEMM vectors   chosen when the CPU has
//   v2       SSE4.2 (the library's baseline)        4 floats       always
//   avx2     AVX2 + FMA (x86-64-v3)                 8 floats       avx2, fma, bmi2
//   avx512   AVX-512 F/BW/DQ/VL/CD (x86-64-v4)      16 floats      those five and avx2, fma
//   avx512_bf16  avx512 + AVX512_BF16 (vdpbf16ps)  16 floats      avx512 and avx512_bf16
//
// avx512_bf16 is avx512 with one more kernel: the packed GEMM under "medium"
// (core/packed_gemm_bf16_kernel.inc) multiplies bfloat16 pairs with the CPU's dot products
// instead of float32 FMAs on rounded values (Zen 4, Cooper Lake, Sapphire and Emerald Rapids).
//
// The environment variable HEED_CPU=v2|avx2|avx512|avx512_bf16 forces a level no higher than the
// machine's (to compare levels, or to test the lower ones); any other value, or a level the
// CPU lacks, is a heed::Error at first use. heed::cpu_capability() names the level in use.
//
// The scalar reference of each kernel stays beside it (gemm_naive, core/blas.h), and
// tests/test_packed_gemm.cpp runs every variant the machine supports against it by calling
// kernels_at(level) directly.
//
// The elementwise loops (core/elementwise.h: map, zip, the row reductions) take their
// function as a lambda, so they cannot sit in a table compiled elsewhere; they go through
// run_at_cpu_level below instead, which compiles the loop three times in the caller's file
// (GCC's target attribute: the same source for other instructions) and runs the one of the
// level in use. The three copies do the same operations per element, but GCC may contract
// a * b + c into one FMA in the AVX2 and AVX-512 copies (its default -ffp-contract=fast), so
// a loop's results can differ in the last bit between levels (GELU's does); at one level,
// every call gives the same bits. tests/test_fastmath.cpp runs each copy against one call
// compiled for its level.
#pragma once
#include <cstdint>
#include <vector>

#include "real.h"

namespace heed {

enum class CpuLevel { v2 = 0, avx2 = 1, avx512 = 2, avx512_bf16 = 3 };

// "v2", "avx2", "avx512" or "avx512_bf16"
const char* cpu_level_name(CpuLevel level);

// The level heed's kernels run at in this process (selected at the first call), and its name.
CpuLevel cpu_level();
const char* cpu_capability();

// The highest level this CPU supports, from cpuid; and every level up to it, lowest first.
CpuLevel cpu_machine_level();
std::vector<CpuLevel> cpu_supported_levels();

// The selection rule, separate from the process's one selection so that it can be tested:
// `forced` is HEED_CPU's value (nullptr or "" when unset). Throws heed::Error for an unknown
// name or a level above `machine`.
CpuLevel cpu_select_level(const char* forced, CpuLevel machine);

// One variant of every dispatched kernel. Each level's table is defined in its own file.
struct CpuKernels {
  CpuLevel level;
  // C (M, N) = alpha A @ B or += (core/packed_gemm.h's gemm_packed, after its checks); the
  // packed panels start at `panels`, pstride values apart (K * kPanel for a whole packing;
  // more when the product runs over K rows of a taller packing).
  void (*gemm_packed)(bool trans_a, int64_t M, const real* A, int64_t lda, const real* panels,
                      int64_t pstride, int64_t K, int64_t N, real alpha, bool accumulate, real* C,
                      int64_t ldc);
  // The same under "medium" with bf16 dot products, where the level has them (nullptr
  // elsewhere; core/packed_gemm_bf16_kernel.inc): A as bf16 pairs (M, ceil(K / 2)) with leading
  // dim lda, the panels those of a "medium" packing (floats rounded to bfloat16).
  void (*gemm_packed_bf16)(int64_t M, const unsigned* a_pairs, int64_t lda, const float* panels,
                           int64_t pstride, int64_t K, int64_t N, float alpha, bool accumulate,
                           float* C, int64_t ldc);
};

// The table of the level in use; the table of a given level (a level the CPU supports: tests
// call every variant this way; heed::Error otherwise).
const CpuKernels& cpu_kernels();
const CpuKernels& cpu_kernels_at(CpuLevel level);

// body() compiled for one level: [[gnu::flatten]] inlines the body and all it calls (the
// lambda's f, fastmath's functions) into the function, which the target attribute compiles
// with that level's instructions, so GCC vectorises the loop inside 4, 8 or 16 floats wide.
// The ISA is named feature by feature (not arch=...): GCC inlines a callee into a caller of
// another -march only when the two agree.
template <class Body>
[[gnu::flatten]] void run_v2(const Body& body) {
  body();
}
template <class Body>
[[gnu::flatten, gnu::target("avx2,fma,bmi,bmi2,f16c,lzcnt,movbe")]] void run_avx2(const Body& body) {
  body();
}
// GCC's vectoriser uses 256 of AVX-512's bits unless asked for 512; clang's target attribute
// has no such option (and ignores an attribute that names it).
#ifdef __clang__
#define HEED_TARGET_AVX512 "avx512f,avx512bw,avx512dq,avx512vl,avx512cd,avx2,fma,bmi,bmi2,f16c,lzcnt,movbe"
#else
#define HEED_TARGET_AVX512 \
  "avx512f,avx512bw,avx512dq,avx512vl,avx512cd,avx2,fma,bmi,bmi2,f16c,lzcnt,movbe,prefer-vector-width=512"
#endif
template <class Body>
[[gnu::flatten, gnu::target(HEED_TARGET_AVX512)]] void run_avx512(const Body& body) {
  body();
}

// body() at `level` (one the CPU supports), or at the level in use.
template <class Body>
void run_at_cpu_level(CpuLevel level, const Body& body) {
  switch (level) {
    case CpuLevel::avx512_bf16:  // the elementwise loops have no use for bf16 dot products
    case CpuLevel::avx512: return run_avx512(body);
    case CpuLevel::avx2: return run_avx2(body);
    case CpuLevel::v2: break;
  }
  run_v2(body);
}
template <class Body>
void run_at_cpu_level(const Body& body) {
  run_at_cpu_level(cpu_level(), body);
}

}  // namespace heed
