// layer_norm_op.h - layer normalisation (Ba et al. 2016) as one fused op, as F.layer_norm.
//
//   mu   = mean(x[n, :])                           over the trailing normalized_shape dims
//   var  = mean((x[n, :] - mu)^2)                  biased, as PyTorch
//   y    = (x - mu) / sqrt(var + eps) * w + b      w, b: normalized_shape (or undefined)
//
// The composed twin (mean, var, sub, div ops) lives in tests/gradcheck_layers.cpp, which
// proves the two agree in outputs and gradients.
#pragma once
#include "../core/tensor.h"

namespace heed {

// Throws heed::Error naming "layer_norm" and the shapes when x's trailing dims are not
// normalized_shape, or w/b do not have that shape.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);

}  // namespace heed
