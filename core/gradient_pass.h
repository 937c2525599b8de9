// gradient_pass.h - one pass over the gradient that a Linear's backward reads (after an
// activation, its gradient):
//
//   dz = dy               or  dz = dy * dact   (dact: the activation's derivative, saved by the forward)
//   db = sum_n dz[n, :]   the bias gradient: column sums in double, in the fixed blocks of
//                         64 rows of detail::column_sums (autograd/reduce_util.h), so the same bits
//   dz as the backward's two products read it (dx = dz W, dW = dz^T x): a Bf16Matrix
//                         (core/blas.h), under "medium" dz's 16 bits or its rounding
//
// The composed path reads the gradient three times (the activation's backward writes dz, the
// bias gradient sums it, "medium" converts it for the products); this reads it once, each block
// of 64 rows by 1024 columns multiplied, summed and converted while it is in cache, split over
// heed's threads. The values are the composed path's, bit for bit (tests/test_gemm_epilogue.cpp).
//
//   GradientPass pass{dy, N, M};  pass.db = db;               // Linear: db and dy's conversion
//   const Bf16Matrix dz16(pass);
//   gemm(dz16.as_a(), ..., dz16.data(), dz16.ld(), ...);
#pragma once
#include <cstdint>

#include "real.h"

namespace heed {

struct GradientPass {
  const real* dy = nullptr;    // (rows, cols), compact
  int64_t rows = 0, cols = 0;
  const real* dact = nullptr;  // (rows, cols), compact, or null: dz = dy
  real* dz = nullptr;          // (rows, cols), compact: dz's floats (required with dact)
  real* db = nullptr;          // (cols): dz's column sums, or null
};

}  // namespace heed
