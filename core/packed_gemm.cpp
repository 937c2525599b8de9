// packed_gemm.cpp - see packed_gemm.h.
#include "packed_gemm.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "cpu.h"
#include "error.h"
#include "matmul_precision.h"

namespace heed {

namespace {
constexpr int64_t kAlign = 64 / int64_t(sizeof(real));  // room to align the panels to 64 bytes
int64_t packed_size(int64_t K, int64_t N) { return (N + kPanel - 1) / kPanel * K * kPanel + kAlign; }
}  // namespace

// Both select the CPU level if no kernel has yet (cpu_kernels()): a bad HEED_CPU is reported
// here, before the parallel regions that run gemm_packed.
void reserve_b(PackedB& p, int64_t K, int64_t N) {
  cpu_kernels();
  p.buffer.reserve(packed_size(K, N));
}

void pack_b(PackedB& p, const real* src, bool trans, int64_t ld, int64_t K, int64_t N) {
  cpu_kernels();
  p.K = K;
  p.N = N;
  p.bf16 = gemm_rounds_to_bf16();
  const int64_t panels = (N + kPanel - 1) / kPanel;
  p.buffer.resize(packed_size(K, N));  // within its capacity when refilled: no allocation
  const uintptr_t at = reinterpret_cast<uintptr_t>(p.buffer.data());
  p.offset = int64_t((64 - at % 64) % 64 / sizeof(real));
  for (int64_t q = 0; q < panels; ++q) {
    real* dst = p.buffer.data() + p.offset + q * K * kPanel;
    const int64_t n0 = q * kPanel, n = std::min(kPanel, N - n0);
    if (n < kPanel) std::fill(dst, dst + K * kPanel, real(0));  // zero beyond N
    if (trans && n == kPanel) {  // B[k][n0 + j] = src[(n0 + j) * ld + k]: a row of the panel
      for (int64_t k = 0; k < K; ++k)  // at a time, so each cache line is written once
#pragma GCC unroll 16
        for (int64_t j = 0; j < kPanel; ++j) dst[k * kPanel + j] = src[(n0 + j) * ld + k];
    } else if (trans) {
      for (int64_t j = 0; j < n; ++j)
        for (int64_t k = 0; k < K; ++k) dst[k * kPanel + j] = src[(n0 + j) * ld + k];
    } else if (n == kPanel) {  // a fixed-size copy per row, which GCC makes vector moves
      for (int64_t k = 0; k < K; ++k) std::copy_n(src + k * ld + n0, kPanel, dst + k * kPanel);
    } else {
      for (int64_t k = 0; k < K; ++k) std::copy_n(src + k * ld + n0, n, dst + k * kPanel);
    }
    if (p.bf16) round_to_bf16(dst, dst, long(K * kPanel));  // the zeros past N stay zeros
  }
}

PackedB pack_b(const real* src, bool trans, int64_t ld, int64_t K, int64_t N) {
  PackedB p;
  pack_b(p, src, trans, ld, K, N);
  return p;
}

namespace {

// A block of A (rows, depth) times `depth` rows of the panels on a level with bf16 dot
// products (core/packed_gemm_bf16_kernel.inc): A's values paired along k as the instruction
// reads them, pairs[i][kk] = bf16(a[i][2kk]) | bf16(a[i][2kk + 1]) << 16, 0 past depth. In
// memory those pairs are row i's 16-bit roundings in order (x86 is little-endian), so each row
// is one to_bf16_bits pass, from A where it lies (`src`, rows ld apart; the same bits as
// rounding to float and taking the high halves, NaNs quieted alike).
void gemm_block_bf16_dot(const CpuKernels& kernels, const real* src, int64_t ld, int64_t rows,
                         int64_t depth, const real* panels, int64_t pstride, int64_t N, real alpha,
                         bool add, real* C, int64_t ldc) {
#ifdef HEED_DOUBLE  // no level has the kernel in the double build
  fail("gemm_packed", "bf16 dot products in the double build");
#else
  static_assert(kRoundDepth % 2 == 0, "blocks after the first start at an even row of the panels");
  alignas(64) uint16_t halves[kRoundRows * kRoundDepth];  // (rows, 2 * width): the pairs' halves
  const int64_t width = (depth + 1) / 2;
  for (int64_t i = 0; i < rows; ++i) {
    uint16_t* row = halves + i * 2 * width;
    to_bf16_bits(src + i * ld, row, long(depth));
    if (depth % 2) row[depth] = 0;  // an odd depth's last pair has no high half
  }
  // The kernel reads the pairs as 32-bit words; it is called through the level's table (no
  // inlining across it), and the buffer holds nothing else.
  kernels.gemm_packed_bf16(rows, reinterpret_cast<const unsigned*>(halves), width, panels, pstride, depth,
                           N, alpha, add, C, ldc);
#endif
}

}  // namespace

// The kernel of the CPU's level (core/cpu.h, core/packed_gemm_kernel.inc).
void gemm_packed(bool trans_a, int64_t M, const real* A, int64_t lda, const PackedB& B, real alpha,
                 bool accumulate, real* C, int64_t ldc) {
  gemm_packed_at(cpu_kernels(), trans_a, M, A, lda, B, alpha, accumulate, C, ldc);
}

void gemm_packed_at(const CpuKernels& kernels, bool trans_a, int64_t M, const real* A, int64_t lda,
                    const PackedB& B, real alpha, bool accumulate, real* C, int64_t ldc) {
  const int64_t K = B.K, pstride = K * kPanel;
  if (!B.bf16 || M == 0 || K == 0) {
    kernels.gemm_packed(trans_a, M, A, lda, B.panels(), pstride, K, B.N, alpha, accumulate, C, ldc);
    return;
  }
  // "medium": A (M, K) in blocks of rows i0.. and depths k0.., each rounded (into `a`, or into
  // the bf16 kernel's pairs), times rows k0.. of every panel; the first depth block writes C
  // or adds to it as asked, the later ones add.
  alignas(64) real a[kRoundRows * kRoundDepth];
  const bool dot = kernels.gemm_packed_bf16 != nullptr;
  for (int64_t i0 = 0; i0 < M; i0 += kRoundRows) {
    const int64_t rows = std::min(kRoundRows, M - i0);
    for (int64_t k0 = 0; k0 < K; k0 += kRoundDepth) {
      const int64_t depth = std::min(kRoundDepth, K - k0);
      const real* block = A + (i0 * lda + k0);  // A's rows, lda apart
      int64_t ld = lda;
      if (trans_a) {  // a[i][k] = A(i0 + i, k0 + k) = src[k0 + k][i0 + i]
        for (int64_t k = 0; k < depth; ++k)
          for (int64_t i = 0; i < rows; ++i) a[i * depth + k] = A[(k0 + k) * lda + i0 + i];
        block = a, ld = depth;
      }
      const bool add = accumulate || k0 > 0;
      if (dot) {
        gemm_block_bf16_dot(kernels, block, ld, rows, depth, B.panels() + k0 * kPanel, pstride, B.N, alpha,
                            add, C + i0 * ldc, ldc);
        continue;
      }
      if (trans_a)  // float32 FMAs on the rounded values
        round_to_bf16(a, a, long(rows * depth));
      else  // rounded as copied: one pass over each row
        for (int64_t i = 0; i < rows; ++i) round_to_bf16(block + i * lda, a + i * depth, long(depth));
      kernels.gemm_packed(false, rows, a, depth, B.panels() + k0 * kPanel, pstride, depth, B.N, alpha, add,
                          C + i0 * ldc, ldc);
    }
  }
}

}  // namespace heed
