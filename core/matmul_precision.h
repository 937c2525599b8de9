// matmul_precision.h - how precisely heed's float32 GEMMs multiply, as PyTorch's
// torch.set_float32_matmul_precision (https://pytorch.org/docs/stable/generated/
// torch.set_float32_matmul_precision.html).
//
//   "highest"  (the default) float32 inputs, float32 products and sums: plain sgemm.
//   "high"     a faster path of float32-level accuracy where the hardware has one (PyTorch: TF32
//              on GPUs, bf16x3 on AMX). heed has none yet, so "high" computes as "highest".
//   "medium"   each GEMM input is rounded to bfloat16 (round to nearest even, a NaN stays a NaN)
//              as the GEMM reads it; products and sums stay float32. Tensors, weights and
//              gradients stay float32: only the inputs of the multiply lose precision.
//
// bfloat16 is float32 with the low 16 bits of the mantissa dropped: the same 8-bit exponent
// (the same range), 8 significant bits instead of 24 (a relative rounding error up to 2^-9).
// The sum of K products keeps float32 because rounding each partial sum to 8 bits would lose
// the small terms of a long sum; CPUs with bf16 dot-product units (AVX512_BF16 vdpbf16ps, AMX
// tdpbf16ps) accumulate in float32 for the same reason.
//
// The setting is read in two places, which every GEMM in heed goes through, forward and
// backward: gemm() (core/blas.h: Linear, matmul/bmm, the composed attentions, the recurrent
// layers' input and weight-gradient products, the one-row products of cached decoding) and the
// packed GEMM (core/packed_gemm.h: flash and block-sparse attention's tiles, the recurrent
// layers' per-step products), which round B as pack_b packs it and A as gemm_packed reads it.
// Where the CPU has bf16 units and the engine is oneDNN (core/gemm_engine.h), gemm() hands
// the rounded operands to oneDNN's bf16 matmul, which multiplies them on the units and sums in
// float32. The packed GEMM, on a CPU with AVX512_BF16 (level avx512_bf16, core/cpu.h),
// multiplies the rounded values in pairs with vdpbf16ps. Elsewhere (CPUs without the units,
// OpenBLAS, one-row products) heed multiplies the rounded values with float32 FMAs: bf16's
// numbers with no speed-up (and it pays for the rounding). A parameter's rounding is shared while
// the parameter is unchanged within a backward pass or a Bf16CacheScope (core/bf16_cache.h), and an operand that goes into two products
// is rounded once (core/blas.h, Bf16Matrix); the results are those of rounding at every GEMM.
//
// In the double build (-DHEED_DOUBLE) the setting can be set and read but changes nothing:
// every GEMM stays in double.
//
// The setting is per process (one atomic, as PyTorch's), so a thread that changes it changes
// it for every thread; set it before starting work, or use the guard around work that owns
// the process.
//
//   heed::set_float32_matmul_precision("medium");
//   { heed::MatmulPrecisionGuard exact("highest"); check(model); }  // back to "medium" after
#pragma once
#include <cstdint>
#include <string>

namespace heed {

enum class MatmulPrecision { highest = 0, high = 1, medium = 2 };

// Throws heed::Error naming the function and the value for any other name; the setting is then
// unchanged.
void set_float32_matmul_precision(const std::string& name);
std::string get_float32_matmul_precision();

MatmulPrecision matmul_precision();
void set_matmul_precision(MatmulPrecision p);
// Called with the new precision after every set_matmul_precision (and so every guard), in the
// order added. The bfloat16 weight cache (core/bf16_cache.cpp) adds one, at static
// initialisation, that empties it when the precision leaves "medium": this file does not
// depend on it. A listener must not throw; at most 4 (a heed::Error beyond).
void add_matmul_precision_listener(void (*listener)(MatmulPrecision));
const char* matmul_precision_name(MatmulPrecision p);
// "highest" -> highest, ...; heed::Error naming `op` and the value for any other name.
MatmulPrecision parse_matmul_precision(const std::string& name, const char* op);

// True when GEMMs round their inputs to bfloat16: "medium" in the float build.
bool gemm_rounds_to_bf16();

// Sets the precision for a scope and restores the one before it when destroyed (also when an
// exception leaves the scope). A bad name throws from the constructor and changes nothing.
// Not copyable or movable (a scope). Guards nest; a guard restores what it saw at
// construction, so guards on different threads that overlap restore in destruction order.
class MatmulPrecisionGuard {
 public:
  explicit MatmulPrecisionGuard(const std::string& name);
  explicit MatmulPrecisionGuard(MatmulPrecision p);
  ~MatmulPrecisionGuard();
  MatmulPrecisionGuard(const MatmulPrecisionGuard&) = delete;
  MatmulPrecisionGuard& operator=(const MatmulPrecisionGuard&) = delete;
  MatmulPrecision previous() const { return previous_; }

 private:
  MatmulPrecision previous_;
};

// x rounded to the nearest bfloat16 (ties to even), returned as the float it equals: the low
// 16 bits of the result are zero. A NaN stays a (quiet) NaN with its sign; values past the
// largest bfloat16 round to infinity, as PyTorch's c10::BFloat16.
inline float round_to_bf16(float x) {
  unsigned u;
  __builtin_memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    u = (u | 0x00400000u) & 0xffff0000u;
  else
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  float r;
  __builtin_memcpy(&r, &u, 4);
  return r;
}
inline double round_to_bf16(double x) { return round_to_bf16(float(x)); }

// dst[i] = round_to_bf16(src[i]) for n values (dst may be src). The double form exists so that
// code written against `real` compiles in the double build, which never calls it.
void round_to_bf16(const float* src, float* dst, long n);
void round_to_bf16(const double* src, double* dst, long n);

// dst[i] = the bfloat16 nearest src[i] as its 16 bits (the high half of round_to_bf16(src[i])),
// the storage oneDNN's bf16 matmul reads (core/onednn_matmul.h).
void to_bf16_bits(const float* src, uint16_t* dst, long n);

}  // namespace heed
