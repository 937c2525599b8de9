// layer_norm.h - layer normalisation (Ba et al. 2016) as one fused op, as F.layer_norm;
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

#include "../../core/tensor.h"

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

// The kernels (llm.c's layernorm_forward / layernorm_backward), one argument struct each, in
// llm.c's fixed order: the backward takes the forward's arguments (x, w and the mean and rstd
// the forward wrote) and the gradients. The forward writes y, mean and rstd.
struct LayerNormArgs {
  int64_t N = 0, D = 0;
  const real* x = nullptr;  // (N, D)
  const real* w = nullptr;  // (D), or null
  const real* b = nullptr;  // (D), or null
  double eps = 1e-5;
  real* y = nullptr;        // (N, D)
  real* mean = nullptr;     // (N)
  real* rstd = nullptr;     // (N)
};
// The backward ACCUMULATES with += into dw (D) and db (D), so pass them zeroed (or holding
// gradients to add to), and WRITES dx (N, D): every element, no zeroing needed. (dx is the
// size of x: a version that zeroed dx and accumulated into it, as llm.c does, was slower on
// the whole op at 4096 x 1024, the shape of bench_core's layer_norm_4096x1024_fwd_bwd row.)
// A null output is not computed.
struct LayerNormGrads {
  const real* dy = nullptr;  // (N, D)
  real* dx = nullptr;        // (N, D)
  real* dw = nullptr;        // (D)
  real* db = nullptr;        // (D)
};
void layer_norm_forward(const LayerNormArgs& a);
void layer_norm_backward(const LayerNormArgs& a, const LayerNormGrads& g);

}  // namespace heed
