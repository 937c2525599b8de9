// loss.h - the losses as fused differentiable ops, each one recorded node with a
// hand-written backward (loss.cpp). Arguments in ATen's order (at::cross_entropy_loss,
// at::nll_loss, ...). Programs call them through heed::nn::functional and the loss modules
// (layers/loss.h), which take an options struct; the equations are written there.
//
//   cross_entropy_loss   logits (N, C) or (N, C, d1...)   target class ids (N) or (N, d1...)
//   nll_loss             log-probs, same shapes as cross_entropy_loss
//   mse_loss             input and target of one shape
//   binary_cross_entropy_with_logits   logits and 0..1 targets of one shape
//   binary_cross_entropy               probabilities in [0, 1] and targets of one shape
//   soft_margin_loss                   input and +-1 targets of one shape
//
// The class dimension is dim 1, as in PyTorch. weight (C) and pos_weight are constants
// (undefined: every weight 1). Every argument after the target defaults as ATen's (no
// weight, Mean, ignore_index -100, no smoothing): torch::nll_loss(logp, y). Reductions: None
// returns one loss per target position (the target's shape); Sum adds them; Mean divides
// the sum by the number of positions, or, for the class-index losses, by the summed class
// weights of the positions not ignored (1 each without weights), as PyTorch does; if every
// position is ignored, Mean is 0 with zero gradient.
// Class weights may be negative or zero, as in PyTorch: counted positions whose weights sum
// to 0 give a Mean of NaN (or +-Inf), PyTorch's 0/0, never a silent 0.
//
//   Tensor loss = heed::cross_entropy_loss(logits, targets, Tensor(), Reduction::Mean, -100, 0.1);
#pragma once
#include <cstdint>

#include "../../core/tensor.h"

namespace heed {

enum class Reduction { None, Mean, Sum };
// libtorch's names for them: .reduction(torch::kSum) reads the same after torch_compat.h.
inline constexpr Reduction kNone = Reduction::None, kMean = Reduction::Mean, kSum = Reduction::Sum;

// Log-softmax and NLL fused, with label smoothing eps (Szegedy et al. 2016):
//   lse_i  = log sum_c exp(x_i,c)
//   loss_i = (1 - eps) * w_y * (lse_i - x_i,y) + eps/C * sum_c w_c * (lse_i - x_i,c),  y = target_i
//   dx_i,c = s_i * (softmax(x_i)_c * ((1 - eps) * w_y + eps/C * sum_k w_k) - (1 - eps) * w_y * [c == y] - eps/C * w_c)
// with s_i the upstream gradient of position i times the reduction's scale. A target outside
// [0, C) that is not ignore_index is a heed::Error naming "cross_entropy".
Tensor cross_entropy_loss(const Tensor& input, const IndexTensor& target, const Tensor& weight = {},
                          Reduction reduction = Reduction::Mean, int64_t ignore_index = -100,
                          double label_smoothing = 0);
// The same loss composed from log_softmax, gather, mul and sum: slower, its gradient is those
// ops'. The reference the fused op is tested against (tests/test_loss.cpp).
Tensor cross_entropy_loss_reference(const Tensor& input, const IndexTensor& target,
                                    const Tensor& weight, Reduction reduction,
                                    int64_t ignore_index, double label_smoothing);

// loss_i = -w_y * logp_i,y        dlogp_i,c = -s_i * w_y * [c == y]
Tensor nll_loss(const Tensor& input, const IndexTensor& target, const Tensor& weight = {},
                Reduction reduction = Reduction::Mean, int64_t ignore_index = -100);

// loss_i = (x_i - y_i)^2           dx = s * 2 (x - y),  dy = -dx
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

// loss_i = w_i * [(1 - y_i) x_i + L_i * softplus(-x_i)],  L_i = 1 + (p_i - 1) y_i
//   dx_i = s_i * w_i * ((1 - y_i) - L_i * sigmoid(-x_i))
//   dy_i = s_i * w_i * (-x_i + (p_i - 1) * softplus(-x_i))
// weight and pos_weight broadcast to input's shape.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight = {}, const Tensor& pos_weight = {},
                                        Reduction reduction = Reduction::Mean);

// loss_i = log(1 + e^(-y_i x_i)) = softplus(-y_i x_i)        y usually +-1 (any value works)
//   dx_i = -s_i * y_i * sigmoid(-y_i x_i)     dy_i = -s_i * x_i * sigmoid(-y_i x_i)
// The two-class logistic loss (PyTorch's soft_margin_loss); finite where e^(-y x) overflows.
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction);

// loss_i = -w_i * [y_i max(log p_i, -100) + (1 - y_i) max(log(1 - p_i), -100)]   p, y (any shape)
//   dp_i = s_i * w_i * (p_i - y_i) / max((1 - p_i) p_i, 1e-12)
//   dy_i = s_i * w_i * [max(log(1 - p_i), -100) - max(log p_i, -100)]
// As PyTorch's (the clamp and eps are its own): finite at p = 0 and 1; p outside [0, 1] is a
// heed::Error. weight broadcasts to p's shape.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            Reduction reduction = Reduction::Mean);

}  // namespace heed
