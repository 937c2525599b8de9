// linalg.h - matmul, with PyTorch's rules:
//   1-D @ 1-D -> ()  (dot)        2-D @ 2-D -> (N, M)
//   (..., N, K) @ (..., K, M) -> (..., N, M), leading (batch) dims broadcast
//   a 1-D left operand is treated as (1, K) and a 1-D right one as (K, 1), then squeezed.
// Forward and backward call gemm (core/blas.h) with transpose flags; no transposes are copied.
#pragma once
#include "../../core/tensor.h"

namespace heed {

Tensor matmul(const Tensor& a, const Tensor& b);

}  // namespace heed
