// packed_gemm.cpp - see packed_gemm.h.
#include "packed_gemm.h"

#include <algorithm>
#include <cstdint>

namespace heed {

namespace {

constexpr int kLanes = 32 / int(sizeof(real));  // values in a 256-bit vector
typedef real vec __attribute__((vector_size(32)));
typedef real vec_u __attribute__((vector_size(32), aligned(sizeof(real))));  // unaligned access

inline vec load(const real* p) { return *reinterpret_cast<const vec_u*>(p); }
inline void store(real* p, vec v) { *reinterpret_cast<vec_u*>(p) = v; }
inline vec splat(real x) { return x - vec{}; }  // x - (+0) is x exactly, so one broadcast

// C (MR, n) = alpha A (MR, K) @ panel (K, kPanel), or += when accumulate, keeping the first
// n <= kPanel columns. A(i, k) is a[i * lda + k] (MR rows, each read front to back) or, when
// TA, a[k * lda + i] (A stored transposed: the MR values of each k side by side).
template <int MR, bool TA>
void kernel(int64_t K, const real* a, int64_t lda, const real* panel, real alpha, bool accumulate,
            real* C, int64_t ldc, int64_t n) {
  vec acc[MR][2];
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = vec{};
#pragma GCC unroll 4
  for (int64_t k = 0; k < K; ++k, panel += kPanel) {
    const vec b0 = load(panel), b1 = load(panel + kLanes);
    for (int i = 0; i < MR; ++i) {
      const vec ai = splat(TA ? a[k * lda + i] : a[i * lda + k]);
      acc[i][0] += ai * b0;
      acc[i][1] += ai * b1;
    }
  }
  const vec va = splat(alpha);
  if (n == kPanel) {
    for (int i = 0; i < MR; ++i) {
      real* c = C + i * ldc;
      if (accumulate) {
        store(c, load(c) + va * acc[i][0]);
        store(c + kLanes, load(c + kLanes) + va * acc[i][1]);
      } else {
        store(c, va * acc[i][0]);
        store(c + kLanes, va * acc[i][1]);
      }
    }
    return;
  }
  for (int i = 0; i < MR; ++i) {  // the last, partial panel
    real tile[kPanel];
    store(tile, va * acc[i][0]);
    store(tile + kLanes, va * acc[i][1]);
    real* c = C + i * ldc;
    for (int64_t j = 0; j < n; ++j) c[j] = accumulate ? c[j] + tile[j] : tile[j];
  }
}

using Kernel = void (*)(int64_t, const real*, int64_t, const real*, real, bool, real*, int64_t,
                        int64_t);
constexpr Kernel kKernels[2][kMaxRows + 1] = {
    {nullptr, kernel<1, false>, kernel<2, false>, kernel<3, false>, kernel<4, false>,
     kernel<5, false>, kernel<6, false>},
    {nullptr, kernel<1, true>, kernel<2, true>, kernel<3, true>, kernel<4, true>,
     kernel<5, true>, kernel<6, true>}};

}  // namespace

namespace {
constexpr int64_t kAlign = 64 / int64_t(sizeof(real));  // room to align the panels to 64 bytes
int64_t packed_size(int64_t K, int64_t N) { return (N + kPanel - 1) / kPanel * K * kPanel + kAlign; }
}  // namespace

void reserve_b(PackedB& p, int64_t K, int64_t N) { p.buffer.reserve(packed_size(K, N)); }

void pack_b(PackedB& p, const real* src, bool trans, int64_t ld, int64_t K, int64_t N) {
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
    } else if (n == kPanel) {  // two vectors per row (a call to memmove per row cost more)
      for (int64_t k = 0; k < K; ++k) {
        const real* s = src + k * ld + n0;
        store(dst + k * kPanel, load(s));
        store(dst + k * kPanel + kLanes, load(s + kLanes));
      }
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

void gemm_packed(bool trans_a, int64_t M, const real* A, int64_t lda, const PackedB& B, real alpha,
                 bool accumulate, real* C, int64_t ldc) {
  const int64_t K = B.K, panels = (B.N + kPanel - 1) / kPanel;
  // Panel by panel: the panel (K x kPanel) stays in L1 while every row block passes it.
  for (int64_t q = 0; q < panels; ++q) {
    const real* panel = B.panels() + q * K * kPanel;
    const int64_t n0 = q * kPanel, n = std::min(kPanel, B.N - n0);
    for_each_row_block(M, [&](int64_t i, int64_t mr) {
      const real* a = trans_a ? A + i : A + i * lda;
      kKernels[trans_a][mr](K, a, lda, panel, alpha, accumulate, C + i * ldc + n0, ldc, n);
    });
  }
}

}  // namespace heed
