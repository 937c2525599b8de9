// linear.h - nn::Linear, the fully connected layer, as torch::nn::Linear.
//
//   y = x @ W^T + b          x: (..., in)   W: (out, in)   b: (out)   y: (..., out)
//
// Initialised as PyTorch: W ~ kaiming_uniform_(a = sqrt(5)), which is U(-1/sqrt(in),
// 1/sqrt(in)), and b ~ U(-1/sqrt(in), 1/sqrt(in)). The product runs as one gemm over all
// leading dims with W read transposed in place (heed::linear, autograd/ops/linear.h).
//
// Example:
//   auto fc = nn::Linear(nn::LinearOptions(784, 10).bias(false));
//   Tensor logits = fc->forward(x);   // (B, 784) -> (B, 10)
#pragma once
#include "module.h"

namespace heed::nn {

class LinearOptions {
 public:
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  HEED_ARG(int64_t, in_features);
  HEED_ARG(int64_t, out_features);
  HEED_ARG(bool, bias) = true;
};

class LinearImpl : public Cloneable<LinearImpl> {
 public:
  explicit LinearImpl(const LinearOptions& options);
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}

  // x: (..., in_features) -> (..., out_features). heed::Error if x's last dim is not in_features.
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // Linear(in_features=4, out_features=2, bias=True)
  void reset_parameters();            // draw W and b afresh, as the constructor does

  LinearOptions options;
  Tensor weight;  // (out, in)
  Tensor bias;    // (out), undefined when options.bias() is false
};
HEED_MODULE(Linear);

}  // namespace heed::nn
