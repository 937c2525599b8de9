// layer_norm.h - nn::LayerNorm (Ba et al. 2016), as torch::nn::LayerNorm.
//
//   y = (x - E[x]) / sqrt(Var[x] + eps) * w + b
//
// E and Var over the trailing normalized_shape dims of each sample, Var biased (divided
// by the count, not count - 1), as PyTorch. w (ones) and b (zeros) have normalized_shape
// and exist when elementwise_affine. The op is heed::layer_norm (autograd/ops/layer_norm.h).
//
// Example:
//   auto ln = nn::LayerNorm(nn::LayerNormOptions({512}).eps(1e-6));
//   Tensor h = ln->forward(x);   // (B, T, 512) -> (B, T, 512)
#pragma once
#include <vector>

#include "module.h"

namespace heed::nn {

class LayerNormOptions {
 public:
  LayerNormOptions(std::vector<int64_t> normalized_shape)  // implicit, as libtorch's
      : normalized_shape_(std::move(normalized_shape)) {}
  HEED_ARG(std::vector<int64_t>, normalized_shape);
  HEED_ARG(double, eps) = 1e-5;
  HEED_ARG(bool, elementwise_affine) = true;
};

class LayerNormImpl : public Cloneable<LayerNormImpl> {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options);

  // x: (..., *normalized_shape) -> the same shape. heed::Error if x does not end in it.
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // LayerNorm((4,), eps=1e-05, elementwise_affine=True)
  void reset_parameters();            // w = 1, b = 0

  LayerNormOptions options;
  Tensor weight;  // normalized_shape; undefined without elementwise_affine
  Tensor bias;    // normalized_shape; undefined without elementwise_affine
};
HEED_MODULE(LayerNorm);

}  // namespace heed::nn
