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

// C (MR, n) (+)= A (MR, K) @ panel (K, kPanel), keeping the first n <= kPanel columns. A's
// rows are lda apart; the broadcasts read each of them front to back.
template <int MR>
void kernel(int64_t K, const real* a, int64_t lda, const real* panel, bool accumulate, real* C,
            int64_t ldc, int64_t n) {
  vec acc[MR][2];
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = vec{};
#pragma GCC unroll 4
  for (int64_t k = 0; k < K; ++k, panel += kPanel) {
    const vec b0 = load(panel), b1 = load(panel + kLanes);
    for (int i = 0; i < MR; ++i) {
      const vec ai = splat(a[i * lda + k]);
      acc[i][0] += ai * b0;
      acc[i][1] += ai * b1;
    }
  }
  if (n == kPanel) {
    for (int i = 0; i < MR; ++i) {
      real* c = C + i * ldc;
      if (accumulate) {
        store(c, load(c) + acc[i][0]);
        store(c + kLanes, load(c + kLanes) + acc[i][1]);
      } else {
        store(c, acc[i][0]);
        store(c + kLanes, acc[i][1]);
      }
    }
    return;
  }
  for (int i = 0; i < MR; ++i) {  // the last, partial panel
    real tile[kPanel];
    store(tile, acc[i][0]);
    store(tile + kLanes, acc[i][1]);
    real* c = C + i * ldc;
    for (int64_t j = 0; j < n; ++j) c[j] = accumulate ? c[j] + tile[j] : tile[j];
  }
}

using Kernel = void (*)(int64_t, const real*, int64_t, const real*, bool, real*, int64_t, int64_t);
constexpr Kernel kKernels[kMaxRows + 1] = {nullptr,   kernel<1>, kernel<2>, kernel<3>,
                                        kernel<4>, kernel<5>, kernel<6>};

}  // namespace

PackedB pack_b(const real* src, bool trans, int64_t ld, int64_t K, int64_t N) {
  PackedB p;
  p.K = K;
  p.N = N;
  const int64_t panels = (N + kPanel - 1) / kPanel;
  constexpr int64_t kAlign = 64 / int64_t(sizeof(real));
  p.buffer.assign(panels * K * kPanel + kAlign, real(0));
  const uintptr_t at = reinterpret_cast<uintptr_t>(p.buffer.data());
  p.offset = int64_t((64 - at % 64) % 64 / sizeof(real));
  for (int64_t q = 0; q < panels; ++q) {
    real* dst = p.buffer.data() + p.offset + q * K * kPanel;
    const int64_t n0 = q * kPanel, n = std::min(kPanel, N - n0);
    if (trans)  // B[k][n0 + j] = src[(n0 + j) * ld + k]
      for (int64_t j = 0; j < n; ++j) {
        const real* s = src + (n0 + j) * ld;
        for (int64_t k = 0; k < K; ++k) dst[k * kPanel + j] = s[k];
      }
    else
      for (int64_t k = 0; k < K; ++k) std::copy_n(src + k * ld + n0, n, dst + k * kPanel);
  }
  return p;
}

void gemm_packed(int64_t M, const real* A, int64_t lda, const PackedB& B, bool accumulate,
                 real* C, int64_t ldc) {
  const int64_t K = B.K, panels = (B.N + kPanel - 1) / kPanel;
  // Panel by panel: the panel (K x kPanel) stays in L1 while every row block passes it.
  for (int64_t q = 0; q < panels; ++q) {
    const real* panel = B.panels() + q * K * kPanel;
    const int64_t n0 = q * kPanel, n = std::min(kPanel, B.N - n0);
    for_each_row_block(M, [&](int64_t i, int64_t mr) {
      kKernels[mr](K, A + i * lda, lda, panel, accumulate, C + i * ldc + n0, ldc, n);
    });
  }
}

void gemm_packed_naive(int64_t M, const real* A, int64_t lda, const real* src, bool trans,
                       int64_t ld, int64_t K, int64_t N, bool accumulate, real* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += double(A[i * lda + k]) * double(trans ? src[j * ld + k] : src[k * ld + j]);
      C[i * ldc + j] = real(acc + (accumulate ? double(C[i * ldc + j]) : 0.0));
    }
}

}  // namespace heed
