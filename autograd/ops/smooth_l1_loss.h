// smooth_l1_loss.h - the robust regression losses of torch.nn.functional, as heed::
// functions (nn::functional's forms, with options structs, are in layers/loss.h):
//
//   smooth_l1   l_i = 0.5 d_i^2 / beta       if |d_i| < beta      d = x - y
//                     |d_i| - 0.5 beta       otherwise            (beta = 0: |d_i|)
//   huber       l_i = 0.5 d_i^2              if |d_i| < delta
//                     delta (|d_i| - 0.5 delta)  otherwise       (= delta * smooth_l1 with beta = delta)
//   dx = s * d / beta (smooth_l1) or s * d (huber) inside, s * sign(d) (times delta) outside;
//   dy = -dx, with s the upstream gradient times the reduction's scale.
// Girshick 2015 ("Fast R-CNN") for smooth L1; Huber 1964 ("Robust Estimation of a Location
// Parameter"). Composed from heed ops (abs, where, mul), so their gradient is those ops'.
// input and target must have one shape; beta >= 0 and delta > 0, as PyTorch (heed::Error
// otherwise). Reductions as the other losses (loss.h): Mean by default.
//   Tensor loss = heed::smooth_l1_loss(pred, y);                         // beta 1, mean
//   Tensor l = heed::huber_loss(pred, y, heed::Reduction::Sum, 0.5);
#pragma once
#include "../../core/tensor.h"
#include "loss.h"  // Reduction

namespace heed {

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                      double beta = 1.0);
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                  double delta = 1.0);

}  // namespace heed
