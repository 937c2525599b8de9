// gradient_pass.cpp - Bf16Matrix(GradientPass): dz written, summed and converted in one pass
// (core/gradient_pass.h).
#include "gradient_pass.h"

#include <algorithm>

#include "allocator.h"
#include "blas.h"
#include "cpu.h"
#include "error.h"
#include "matmul_precision.h"
#include "parallel.h"
#include "scratch.h"

namespace heed {
namespace {

// detail::column_sums's blocks (autograd/reduce_util.h, sum_row_blocks): 64 rows, 1024 columns.
constexpr int64_t kRows = 64, kCols = 1024;

// Rows [k0, k1), columns [i0, i1) of the pass: dz = dy (* dact), acc[i] += dz (when acc), then dz's
// 16 bits or its rounding (when bits or copy).
void block(const GradientPass& p, int64_t k0, int64_t k1, int64_t i0, int64_t i1, double* acc,
           uint16_t* bits, real* copy) {
  const int64_t n = i1 - i0;
  if (acc) std::fill(acc + i0, acc + i1, 0.0);
  for (int64_t k = k0; k < k1; ++k) {
    const int64_t at = k * p.cols + i0;
    const real* z = p.dy + at;
    if (p.dact) {
      real* out = p.dz + at;
      const real *d = p.dy + at, *s = p.dact + at;
      run_at_cpu_level([&] {
        for (int64_t i = 0; i < n; ++i) out[i] = d[i] * s[i];
      });
      z = out;
    }
    if (acc) {
      double* a = acc + i0;
      run_at_cpu_level([&] {
        for (int64_t i = 0; i < n; ++i) a[i] += z[i];
      });
    }
#ifndef HEED_DOUBLE
    if (bits) to_bf16_bits(z, bits + at, long(n));
#endif
    if (copy) round_to_bf16(z, copy + at, long(n));
  }
}

}  // namespace

Bf16Matrix::Bf16Matrix(const GradientPass& p) : data_(p.dact ? p.dz : p.dy), ld_(p.cols) {
  HEED_CHECK(!p.dact || p.dz, "gradient pass", "dact needs dz, where dz = dy * dact goes");
  const int64_t rows = p.rows, cols = p.cols, numel = rows * cols;
  const int64_t blocks = std::max<int64_t>(1, (rows + kRows - 1) / kRows), chunks = (cols + kCols - 1) / kCols;
  Scratch<double> part(p.db ? blocks * cols : 0);  // (blocks, cols): each block's column sums
  if (gemm_rounds_to_bf16() && numel > 0) {  // as Bf16Matrix(src, ...): 16 bits, or a rounded copy
    if (gemm_on_bf16_units()) {
      bytes_ = std::size_t(numel) * sizeof(uint16_t);
      bits_ = static_cast<uint16_t*>(alloc::allocate(bytes_));
    } else {
      bytes_ = std::size_t(numel) * sizeof(real);
      copy_ = static_cast<real*>(alloc::allocate(bytes_));
      rounded_ = true;
    }
  }
  if (!p.dact && !p.db && !bits_ && !copy_) return;  // dz = dy, nothing to sum or convert
  const int64_t work = std::min(rows, kRows) * std::min(cols, kCols) + 1;
  parallel_for(blocks * chunks, kGrainElementwise / work + 1, [&](int64_t b, int64_t e) {
    for (int64_t w = b; w < e; ++w) {  // w = (block, chunk)
      const int64_t blk = w / chunks, i0 = w % chunks * kCols;
      block(p, blk * kRows, std::min(rows, (blk + 1) * kRows), i0, std::min(cols, i0 + kCols),
            part.data ? part.data + blk * cols : nullptr, bits_, copy_);
    }
  });
  if (copy_) data_ = copy_;
  if (!p.db) return;
  for (int64_t i = 0; i < cols; ++i) {  // block 0's sums gather the others, in block order
    double sum = part.data[i];
    for (int64_t blk = 1; blk < blocks; ++blk) sum += part.data[blk * cols + i];
    p.db[i] = real(sum);
  }
}

}  // namespace heed
