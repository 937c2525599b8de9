// packed_gemm.h - C += A @ B with B packed once and reused: the recurrent product of an RNN.
//
//   A: (M, K), packed by pack_a      B: (K, N), packed by pack_b      C: (M, N) row-major, ldc
//
// A recurrent layer multiplies the same weight at every time step: an LSTM computes
// gates_t += h_{t-1} W_hh^T, a (B, H) @ (H, 4H) product with B small (32 rows). A BLAS call
// copies its B operand into the panel layout its kernel reads at every call; with 32 rows that
// copy is paid for by little arithmetic. pack_b() makes the copy once per sequence, pack_a()
// puts the step's (B, H) state in the kernel's order, and gemm_packed() runs the arithmetic,
// on the calling thread (the layers split the columns between threads themselves, one
// parallel region for the whole recurrence).
//
// Layout: the columns of B are cut into panels of kPanel; panel p holds columns
// [p*kPanel, (p+1)*kPanel) as K rows of kPanel values, zero beyond N. The kernel keeps an
// (MR x kPanel) block of C in registers (MR <= 6 rows, kPanel = two 256-bit vectors) and, for
// each k, adds the broadcast A[i][k] times row k of the panel: 2*MR fused multiply-adds from
// 2 vector loads and MR broadcasts.
//
// gemm_packed_naive() is the plain triple loop gemm_packed() must agree with
// (tests/test_packed_gemm.cpp).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "real.h"

namespace heed {

constexpr int64_t kPanel = 2 * 32 / int64_t(sizeof(real));  // two 256-bit vectors: 16 floats

struct PackedB {
  int64_t K = 0, N = 0;
  std::vector<real> buffer;  // the panels, from buffer[offset], and room to align them
  int64_t offset = 0;
  // (ceil(N / kPanel), K, kPanel), 64-byte aligned: each panel row is one cache line, so no
  // vector load straddles two
  const real* panels() const { return buffer.data() + offset; }
};

// B (K, N) = op(src): src is (K, N) with leading dim ld, or (N, K) when trans (B = src^T).
PackedB pack_b(const real* src, bool trans, int64_t ld, int64_t K, int64_t N);

// A (M, K) in the order the kernel reads it: row blocks of 3 to 6 rows once M >= 4 (32 rows:
// 5, 5, 5, 5, 6, 6; a block of 1 or 2 rows has too few accumulators to hide the multiply-add
// latency), each block stored (K, rows). Packed once per step, read by every panel of B.
struct PackedA {
  int64_t M = 0, K = 0;
  std::vector<real> data;                             // block after block, (K, rows) each
  std::vector<std::pair<int64_t, int64_t>> blocks;    // (first row, rows)
};

// Fills `a` (reusing its buffers) from A (M, K) with leading dim lda.
void pack_a(PackedA& a, const real* A, int64_t lda, int64_t M, int64_t K);

// C (M, N) = A @ B, or C += A @ B when accumulate; on the calling thread. A.K == B.K.
void gemm_packed(const PackedA& A, const PackedB& B, bool accumulate, real* C, int64_t ldc);

void gemm_packed_naive(int64_t M, const real* A, int64_t lda, const real* src, bool trans,
                       int64_t ld, int64_t K, int64_t N, bool accumulate, real* C, int64_t ldc);

}  // namespace heed
