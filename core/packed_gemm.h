// packed_gemm.h - C += A @ B with B packed once and reused: the recurrent product of an RNN.
//
//   A: (M, K) row-major, lda      B: (K, N), packed by pack_b      C: (M, N) row-major, ldc
//
// A recurrent layer multiplies the same weight at every time step: an LSTM computes
// gates_t += h_{t-1} W_hh^T, a (B, H) @ (H, 4H) product with B small (32 rows). A BLAS call
// copies its B operand into the panel layout its kernel reads at every call; with 32 rows that
// copy is paid for by little arithmetic. pack_b() makes the copy once per sequence and
// gemm_packed() runs the arithmetic, reading the step's A (B, H) where it lies, on the calling
// thread (the layers split the columns between threads themselves, one parallel region for
// the whole recurrence).
//
// Layout: the columns of B are cut into panels of kPanel; panel p holds columns
// [p*kPanel, (p+1)*kPanel) as K rows of kPanel values, zero beyond N. The rows of A go in
// blocks of MR <= 6 rows (for_each_row_block); the kernel keeps an (MR x kPanel) block of C in
// registers (with AVX2, kPanel = two 256-bit vectors) and, for each k, adds the broadcast
// A[i][k] times row k of the panel: 2*MR fused multiply-adds from 2 vector loads and MR
// broadcasts, which read MR rows of A front to back (MR streams the prefetcher follows;
// copying A into one stream first, as BLAS does, made bench_models' lstm case slower and the
// kernel no faster).
//
// The kernel is compiled once per CPU level and chosen at run time (core/cpu.h): 4-wide
// SSE on any x86-64, 8-wide with AVX2 + FMA, and with AVX-512 16-wide over two panels side
// by side (an MR x 32 block of C in 12 of its 32 registers); under "medium" on a CPU with
// AVX512_BF16, the same blocking on bf16 dot products. The panel layout is the same for every
// level. The kernel itself is in core/packed_gemm_kernel.inc.
//
// Flash attention (autograd/ops/attention/flash_attention.cpp) multiplies its tiles with the same kernel:
// there A is read transposed for two of the backward's products (P^T dO_i, dS^T Q_i).
//
// gemm_naive() (core/blas.h) is the plain triple loop gemm_packed() must agree with
// (tests/test_packed_gemm.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "allocator.h"
#include "real.h"

namespace heed {

constexpr int64_t kPanel = 64 / int64_t(sizeof(real));  // one 64-byte cache line: 16 floats
constexpr int kMaxRows = 6;  // MR of the main kernel: 12 accumulators + 2 panel rows + 1 broadcast

struct PackedB {
  int64_t K = 0, N = 0;
  // packed under "medium" (core/matmul_precision.h): the panels hold B rounded to bfloat16, and
  // gemm_packed rounds A as it reads it. The precision of a packed product is the one in force
  // when B was packed, so one packing gives one precision to every product that uses it.
  bool bf16 = false;
  // the panels, from buffer[offset], and room to align them; from heed's allocator, so
  // alloc::stats() counts them
  std::vector<real, CachingAllocator<real>> buffer;
  int64_t offset = 0;
  // (ceil(N / kPanel), K, kPanel), 64-byte aligned: each panel row is one cache line, so no
  // vector load straddles two
  const real* panels() const { return buffer.data() + offset; }
};

// B (K, N) = op(src): src is (K, N) with leading dim ld, or (N, K) when trans (B = src^T).
// The first form refills p, keeping its buffer's capacity.
void pack_b(PackedB& p, const real* src, bool trans, int64_t ld, int64_t K, int64_t N);
PackedB pack_b(const real* src, bool trans, int64_t ld, int64_t K, int64_t N);
// Sizes p's buffer for any later pack_b of at most K x N, which then allocates nothing (so it
// cannot throw inside a parallel region).
void reserve_b(PackedB& p, int64_t K, int64_t N);

// Calls f(first row, rows) for the row blocks of an M-row A, in order: blocks of 3 to 6 rows
// once M >= 4 (32 rows: 5, 5, 5, 5, 6, 6; a block of 1 or 2 rows has too few accumulators to
// hide the multiply-add latency), the rows spread evenly. MaxRows < 6 for a kernel with fewer
// registers (the SSE one: 3).
template <int MaxRows = kMaxRows, class F>
void for_each_row_block(int64_t M, F f) {
  const int64_t blocks = (M + MaxRows - 1) / MaxRows;
  for (int64_t blk = 0, i = 0; blk < blocks; ++blk) {
    const int64_t mr = (M - i) / (blocks - blk);  // the rows left, spread evenly
    f(i, mr);
    i += mr;
  }
}

// C (M, N) = alpha A @ B, or C += alpha A @ B when accumulate; on the calling thread. A (M, K)
// is read in place: row-major with leading dim lda, or, when trans_a, stored transposed
// (A = src^T, src (K, M) with leading dim lda). B.K == K. As BLAS with beta 0, C's old values
// are never read when writing (=).
// When B.bf16, A is rounded to bfloat16 block by block (kRoundRows x kRoundDepth values at a
// time, into a buffer on the stack: nothing is allocated, so it may run in a parallel region),
// each block multiplied by the matching K rows of the panels, the sums kept in float32: with
// float32 FMAs, or, at level avx512_bf16 (core/cpu.h), with bf16 dot products on the block's
// values paired along k (core/packed_gemm_bf16_kernel.inc; each pair's two products are summed
// before they reach the running sum, so the sums differ from the FMA levels' in rounding).
void gemm_packed(bool trans_a, int64_t M, const real* A, int64_t lda, const PackedB& B, real alpha,
                 bool accumulate, real* C, int64_t ldc);
// The same with the kernels of one CPU level (core/cpu.h; tests run every level this way).
struct CpuKernels;
void gemm_packed_at(const CpuKernels& kernels, bool trans_a, int64_t M, const real* A, int64_t lda,
                    const PackedB& B, real alpha, bool accumulate, real* C, int64_t ldc);
constexpr int64_t kRoundRows = 48, kRoundDepth = 256;  // 48 KB of float

}  // namespace heed
