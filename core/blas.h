// blas.h - general matrix multiply, the one BLAS routine heed uses.
//
//   C = alpha * op(A) @ op(B) + beta * C      op(X) = X or X^T
//   op(A): (M, K)   op(B): (K, N)   C: (M, N), all row-major with leading dims lda/ldb/ldc
//
// gemm() calls cblas_sgemm (float build) or cblas_dgemm (double build), passing the
// transpose flags and leading dimensions, so transposes are never copied; a single row
// (M = 1) goes to cblas_sgemv / cblas_dgemv, which reads B once instead of packing it.
// gemm_naive() is the plain triple loop it must agree with (tests/test_blas.cpp).
//
// Under "medium" (core/matmul_precision.h) gemm() rounds A and B to bfloat16 into scratch
// copies (on the stack up to 96 KiB in all, else from heed's caching allocator) and
// multiplies those; detail::gemm_exact() is the
// product of the values as given, whatever the setting.
#pragma once
#include <cstdint>

#include "real.h"

namespace heed {

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha,
          const real* A, int64_t lda, const real* B, int64_t ldb, real beta, real* C, int64_t ldc);

namespace detail {
void gemm_exact(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha,
                const real* A, int64_t lda, const real* B, int64_t ldb, real beta, real* C,
                int64_t ldc);
}  // namespace detail

void gemm_naive(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha,
                const real* A, int64_t lda, const real* B, int64_t ldb, real beta, real* C,
                int64_t ldc);

}  // namespace heed
