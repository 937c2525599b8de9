// layer_norm_op.h - layer normalisation (Ba et al. 2016) as one fused op, as F.layer_norm;
// its forward and backward kernels over plain pointers; and its twin composed from
// primitive ops.
//
//   mu   = mean(x[n, :])                           over the trailing normalized_shape dims
//   var  = mean((x[n, :] - mu)^2)                  biased, as PyTorch
//   y    = (x - mu) / sqrt(var + eps) * w + b      w, b: normalized_shape (or undefined)
//
// Shapes: x and y are seen as (N, D), D = prod(normalized_shape), N = every leading dim
// folded; w and b (D); mean and rstd = 1 / sqrt(var + eps) (N).
//
//   Tensor y = heed::layer_norm(x, {C}, w, b);       // x (B, T, C)
#pragma once
#include <cstdint>

#include "../core/tensor.h"

namespace heed {

// Throws heed::Error naming "layer_norm" and the shapes when x's trailing dims are not
// normalized_shape, or w/b do not have that shape.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);

// The same normalisation composed from mean, var, sub, div, mul and add: slower, its gradient
// is those ops'. The reference the fused op is tested against (tests/gradcheck_layers.cpp).
Tensor layer_norm_reference(const Tensor& x, const Shape& normalized_shape,
                            const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                            double eps = 1e-5);

// The kernels, outputs first (llm.c's layernorm_forward / layernorm_backward).
// Forward writes y (N, D), mean (N) and rstd (N) from x (N, D); w, b (D) may be null.
void layer_norm_forward(real* y, real* mean, real* rstd, const real* x, const real* w,
                        const real* b, double eps, int64_t N, int64_t D);
// Backward ACCUMULATES with += into dw (D) and db (D), so pass them zeroed (or holding
// gradients to add to), and WRITES dx (N, D): every element, no zeroing needed. (dx is the
// size of x: a version that zeroed dx and accumulated into it, as llm.c does, was slower on
// the whole op at 4096 x 1024, the shape of bench_core's layer_norm_4096x1024_fwd_bwd row.)
// A null output is not computed. dy (N, D); x, w, mean, rstd as the forward's.
void layer_norm_backward(real* dx, real* dw, real* db, const real* dy, const real* x,
                         const real* w, const real* mean, const real* rstd, int64_t N, int64_t D);

}  // namespace heed
