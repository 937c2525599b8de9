// smooth_l1_loss.h - nn::functional::smooth_l1_loss and huber_loss with libtorch's options
// structs (the equations and gradients are in autograd/ops/smooth_l1_loss.h):
//   namespace F = heed::nn::functional;
//   Tensor l1 = F::smooth_l1_loss(pred, y, F::SmoothL1LossFuncOptions().beta(0.5));
//   Tensor l2 = F::huber_loss(pred, y, F::HuberLossFuncOptions().delta(2).reduction(nn::Reduction::Sum));
// heed::Error naming the loss for a negative beta, a delta <= 0, or shapes that differ.
#pragma once
#include "../autograd/ops/smooth_l1_loss.h"
#include "../core/arg.h"
#include "../core/tensor.h"

namespace heed::nn {

class SmoothL1LossOptions {
 public:
  HEED_ARG(Reduction, reduction) = Reduction::Mean;
  HEED_ARG(double, beta) = 1.0;  // >= 0; 0 is the L1 loss
};

class HuberLossOptions {
 public:
  HEED_ARG(Reduction, reduction) = Reduction::Mean;
  HEED_ARG(double, delta) = 1.0;  // > 0
};

namespace functional {

using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;

inline Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                             const SmoothL1LossOptions& options = {}) {
  return heed::smooth_l1_loss(input, target, options.reduction(), options.beta());
}
inline Tensor huber_loss(const Tensor& input, const Tensor& target,
                         const HuberLossOptions& options = {}) {
  return heed::huber_loss(input, target, options.reduction(), options.delta());
}

}  // namespace functional

}  // namespace heed::nn
