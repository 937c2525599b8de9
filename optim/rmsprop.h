// rmsprop.h - optim::RMSprop, exactly torch.optim.RMSprop (Hinton, Neural Networks for
// Machine Learning, lecture 6e, 2012; the centered form: Graves 2013, arXiv:1308.0850,
// eq. 38-45). At each step, g the gradient and p the parameter:
//
//   g = g + weight_decay * p                      (if weight_decay != 0)
//   v = alpha * v + (1 - alpha) * g * g           (state "square_avg")
//   m = alpha * m + (1 - alpha) * g               (centered only: state "grad_avg")
//   avg = sqrt(v - m * m) + eps                   (sqrt(v) + eps when not centered)
//   b = momentum * b + g / avg                    (momentum > 0 only: state "momentum_buffer")
//   p = p - lr * b                                (p = p - lr * g / avg without momentum)
//
// eps sits outside the square root, as in PyTorch. Every buffer starts at zero; the update
// does not depend on the step number. Copying and exceptions are optimizer.h's: an
// RMSprop does not copy, and a step() that throws changes nothing.
//
// Example:
//   optim::RMSprop opt(model->parameters(), optim::RMSpropOptions(1e-3).momentum(0.9).centered(true));
//   opt.zero_grad(); loss.backward(); opt.step();
#pragma once
#include "optimizer.h"

namespace heed::optim {

class RMSpropOptions : public OptimizerCloneableOptions<RMSpropOptions> {
 public:
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}  // implicit, as libtorch's: optim::RMSprop opt(params, 1e-2)
  HEED_ARG(double, lr);
  HEED_ARG(double, alpha) = 0.99;
  HEED_ARG(double, eps) = 1e-8;
  HEED_ARG(double, weight_decay) = 0;
  HEED_ARG(double, momentum) = 0;
  HEED_ARG(bool, centered) = false;
};

class RMSprop final : public OptimizerBase<RMSprop, RMSpropOptions> {
 public:
  using OptimizerBase::OptimizerBase;
  static constexpr const char* kName = "RMSprop";
  static void check(const RMSpropOptions& o);
  static std::vector<std::string> slots(const RMSpropOptions& o);
  static void update(const RMSpropOptions& o, int64_t step, const Tensor& param, const Tensor& grad,
                     std::vector<Tensor>& state);
};

}  // namespace heed::optim
