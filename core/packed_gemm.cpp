// packed_gemm.cpp - see packed_gemm.h.
#include "packed_gemm.h"

#include <algorithm>
#include <cstdint>

#include "cpu.h"

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
  }
}

PackedB pack_b(const real* src, bool trans, int64_t ld, int64_t K, int64_t N) {
  PackedB p;
  pack_b(p, src, trans, ld, K, N);
  return p;
}

// The kernel of the CPU's level (core/cpu.h, core/packed_gemm_kernel.inc).
void gemm_packed(bool trans_a, int64_t M, const real* A, int64_t lda, const PackedB& B, real alpha,
                 bool accumulate, real* C, int64_t ldc) {
  cpu_kernels().gemm_packed(trans_a, M, A, lda, B.panels(), B.K, B.N, alpha, accumulate, C, ldc);
}

}  // namespace heed
