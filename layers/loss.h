// loss.h - losses, in two layers as in libtorch: functions in heed::nn::functional and thin
// modules in heed::nn that hold an options struct and call them. Both end in the fused ops
// of autograd/ops/loss.h, where each loss's forward and hand-written backward are.
//
//   cross_entropy          logits (N, C) or (N, C, d1...)      target class ids (N) or (N, d1...)
//   nll_loss               log-probs, same shapes as cross_entropy
//   mse_loss               input and target of one shape
//   binary_cross_entropy_with_logits   logits and 0..1 targets of one shape
//   binary_cross_entropy   probabilities in [0, 1] and 0..1 targets of one shape
//   smooth_l1_loss, huber_loss   input and target of one shape (composed ops, no module:
//                          autograd/ops/smooth_l1_loss.h has the equations and gradients)
//   soft_margin_loss       input and +-1 targets of one shape
//
// The class dimension is dim 1, as in PyTorch: input (N, C, d1...) pairs with target
// (N, d1...). Logits from a sequence model are (B, T, C), with C last, so flatten them first
// (or move C to dim 1 with transpose(1, 2)):
//   Tensor loss = F::cross_entropy(logits.reshape({-1, C}), targets.reshape({B * T}));  // (B*T, C), (B*T)
// Passing the (B, T, C) logits with (B, T) targets unflattened is a shape error whose message
// says this (the target would have to be (B, C)). Beware T == C: as in PyTorch, the shapes
// then match and dim 1 (time) is taken as the classes.
//
// Reductions: None returns one loss per target position (the target's shape); Sum adds them;
// Mean divides the sum by the number of positions, or, for the class-index losses, by the
// summed class weights of the positions not ignored (1 each without weights), as PyTorch does.
//
// Example:
//   namespace F = heed::nn::functional;
//   Tensor logits = model->forward(x);                                 // (N, C)
//   Tensor loss = F::cross_entropy(logits, targets,                    // targets: IndexTensor (N)
//       nn::CrossEntropyOptions().ignore_index(0).label_smoothing(0.1));
//   loss.backward();
//
//   auto criterion = nn::CrossEntropyLoss(nn::CrossEntropyOptions().ignore_index(0));
//   Tensor loss2 = criterion->forward(logits, targets);
//
// The libtorch spellings of the options (CrossEntropyLossOptions, F::CrossEntropyFuncOptions, ...)
// are aliases of the same structs, so ported code keeps its names.
#pragma once
#include <cstdint>
#include <string>

#include "../autograd/ops/loss.h"
#include "../autograd/ops/smooth_l1_loss.h"
#include "../core/tensor.h"
#include "module.h"

namespace heed::nn {

using heed::Reduction;                    // autograd/ops/loss.h: None, Mean, Sum
const char* reduction_name(Reduction r);  // "none", "mean", "sum"

// ---------------------------------------------------------------- options

// cross_entropy (Szegedy et al. 2016, "Rethinking the Inception Architecture", for smoothing):
//   lse_i = log sum_c exp(x_i,c)
//   loss_i = (1 - eps) * w_y * (lse_i - x_i,y) + eps/C * sum_c w_c * (lse_i - x_i,c),  y = target_i
// where w is the per-class weight (all 1 when none is given) and eps the label smoothing.
class CrossEntropyOptions {
 public:
  HEED_ARG(Tensor, weight);  // (C); a constant. Undefined: every class weighs 1
  HEED_ARG(int64_t, ignore_index) = -100;
  HEED_ARG(Reduction, reduction) = Reduction::Mean;
  HEED_ARG(double, label_smoothing) = 0;  // [0, 1]
};

// nll_loss:  loss_i = -w_y * logp_i,y,  y = target_i
class NLLOptions {
 public:
  HEED_ARG(Tensor, weight);  // (C); a constant
  HEED_ARG(int64_t, ignore_index) = -100;
  HEED_ARG(Reduction, reduction) = Reduction::Mean;
};

// mse_loss:  loss_i = (x_i - y_i)^2
class MSEOptions {
 public:
  HEED_ARG(Reduction, reduction) = Reduction::Mean;
};

// binary_cross_entropy_with_logits, with p = pos_weight and w = weight (both broadcast to x,
// both constants; p usually has shape (C) for (N, C) logits, one weight per class):
//   loss_i = w_i * [ (1 - y_i) * x_i + (1 + (p_i - 1) * y_i) * softplus(-x_i) ]
//   softplus(-x) = log(1 + exp(-x)) = max(-x, 0) + log(1 + exp(-|x|))     (never overflows)
// With p = 1 this is max(x, 0) - x*y + log(1 + exp(-|x|)), the usual stable form.
class BCEWithLogitsOptions {
 public:
  HEED_ARG(Tensor, weight);      // undefined: 1
  HEED_ARG(Tensor, pos_weight);  // undefined: 1
  HEED_ARG(Reduction, reduction) = Reduction::Mean;
};

// binary_cross_entropy on probabilities p = sigmoid(x) (prefer the _with_logits form, which
// never takes log(0)); each log clamped at -100, as PyTorch:
//   loss_i = -w_i * [y_i * max(log p_i, -100) + (1 - y_i) * max(log(1 - p_i), -100)]
class BCELossOptions {
 public:
  HEED_ARG(Tensor, weight);  // broadcasts to p; undefined: 1
  HEED_ARG(Reduction, reduction) = Reduction::Mean;
};

// smooth_l1_loss and huber_loss (autograd/ops/smooth_l1_loss.h); heed::Error naming the loss
// for a negative beta, a delta <= 0, or shapes that differ.
//   Tensor l1 = F::smooth_l1_loss(pred, y, F::SmoothL1LossFuncOptions().beta(0.5));
//   Tensor l2 = F::huber_loss(pred, y, F::HuberLossFuncOptions().delta(2).reduction(nn::Reduction::Sum));
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

// soft_margin_loss:  loss_i = log(1 + exp(-y_i x_i)),  y_i = +-1
class SoftMarginLossOptions {
 public:
  HEED_ARG(Reduction, reduction) = Reduction::Mean;
};

// libtorch's names for the same options.
using CrossEntropyLossOptions = CrossEntropyOptions;
using NLLLossOptions = NLLOptions;
using MSELossOptions = MSEOptions;
using BCEWithLogitsLossOptions = BCEWithLogitsOptions;

// ---------------------------------------------------------------- functions

namespace functional {

using CrossEntropyFuncOptions = CrossEntropyOptions;
using NLLLossFuncOptions = NLLOptions;
using MSELossFuncOptions = MSEOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using SoftMarginLossFuncOptions = SoftMarginLossOptions;

// Log-softmax and NLL fused into one op (autograd/ops/loss.h):
//   dx_i,c = s_i * (softmax(x_i)_c * ((1 - eps) * w_y + eps/C * sum_k w_k) - (1 - eps) * w_y * [c == y] - eps/C * w_c)
// with s_i the upstream gradient of position i times the reduction's scale. Positions whose
// target is ignore_index contribute 0 to the loss and to the Mean's denominator, and get zero
// gradient. If every position is ignored (the denominator is 0), Mean returns 0 with zero
// gradient; PyTorch returns NaN there. A target outside [0, C) that is not ignore_index is a
// heed::Error. The backward is computed, not recorded (no double backward).
Tensor cross_entropy(const Tensor& input, const IndexTensor& target,
                     const CrossEntropyOptions& options = {});
// input holds log-probabilities (e.g. log_softmax(x, 1)); the same shapes, ignore_index and
// all-ignored rule as cross_entropy.   dlogp_i,y = -s_i * w_y
Tensor nll_loss(const Tensor& input, const IndexTensor& target, const NLLOptions& options = {});
// input and target must have the same shape (PyTorch only warns when they broadcast); both may
// require grad.   dx = s * 2 (x - y),  dy = -dx
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSEOptions& options = {});
// input and target of one shape; target may require grad.
//   dx = s * w * ((1 - y) - (1 + (p - 1) y) * sigmoid(-x))      (= s * (sigmoid(x) - y) when p = w = 1)
//   dy = s * w * (-x + (p - 1) * softplus(-x))
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BCEWithLogitsOptions& options = {});
// input holds probabilities in [0, 1] (another value is a heed::Error, as PyTorch); target
// may require grad.   dp = s * w * (p - y) / max((1 - p) p, 1e-12)   (finite at 0 and 1)
//   Tensor loss = F::binary_cross_entropy(sigmoid(x), y, F::BinaryCrossEntropyFuncOptions().reduction(kSum));
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BCELossOptions& options = {});
inline Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                             const SmoothL1LossOptions& options = {}) {
  return heed::smooth_l1_loss(input, target, options.reduction(), options.beta());
}
inline Tensor huber_loss(const Tensor& input, const Tensor& target,
                         const HuberLossOptions& options = {}) {
  return heed::huber_loss(input, target, options.reduction(), options.delta());
}

// input and target of one shape; target may require grad.
//   dx = -s * y * sigmoid(-y x)      dy = -s * x * sigmoid(-y x)
Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                        const SoftMarginLossOptions& options = {});

}  // namespace functional

// ---------------------------------------------------------------- modules
//
// Each holds its options (weight and pos_weight are also registered as buffers, as libtorch
// does) and forwards to the function above. With default options it prints as PyTorch does,
// "CrossEntropyLoss()"; otherwise the options that differ from their defaults are listed, as
// keywords: "CrossEntropyLoss(ignore_index=0, reduction='sum', label_smoothing=0.1)", and a
// weight by its shape: "BCEWithLogitsLoss(pos_weight=(3,))".

class CrossEntropyLossImpl : public Cloneable<CrossEntropyLossImpl> {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyOptions& options = {});
  Tensor forward(const Tensor& input, const IndexTensor& target);
  std::string repr() const override;
  CrossEntropyOptions options;
};
HEED_MODULE(CrossEntropyLoss);

class NLLLossImpl : public Cloneable<NLLLossImpl> {
 public:
  explicit NLLLossImpl(const NLLOptions& options = {});
  Tensor forward(const Tensor& input, const IndexTensor& target);
  std::string repr() const override;
  NLLOptions options;
};
HEED_MODULE(NLLLoss);

class MSELossImpl : public Cloneable<MSELossImpl> {
 public:
  explicit MSELossImpl(const MSEOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  std::string repr() const override;
  MSEOptions options;
};
HEED_MODULE(MSELoss);

class BCEWithLogitsLossImpl : public Cloneable<BCEWithLogitsLossImpl> {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  std::string repr() const override;
  BCEWithLogitsOptions options;
};
HEED_MODULE(BCEWithLogitsLoss);

class BCELossImpl : public Cloneable<BCELossImpl> {
 public:
  explicit BCELossImpl(const BCELossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  std::string repr() const override;  // BCELoss()
  BCELossOptions options;
};
HEED_MODULE(BCELoss);

class SoftMarginLossImpl : public Cloneable<SoftMarginLossImpl> {
 public:
  explicit SoftMarginLossImpl(const SoftMarginLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  std::string repr() const override;  // SoftMarginLoss()
  SoftMarginLossOptions options;
};
HEED_MODULE(SoftMarginLoss);

}  // namespace heed::nn
