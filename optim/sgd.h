// sgd.h - optim::SGD: stochastic gradient descent with momentum, Nesterov momentum and
// weight decay, exactly torch.optim.SGD's update (g is the gradient, p the parameter):
//
//   d = g + weight_decay * p
//   b = d                                          on the first step   (the momentum buffer)
//   b = momentum * b + (1 - dampening) * d         after it
//   d = d + momentum * b    (nesterov)     or     d = b    (otherwise)    (skipped if momentum == 0)
//   p = p - lr * d
//
// Nesterov momentum needs momentum > 0 and dampening 0 (as PyTorch). The buffer is the
// state slot "momentum_buffer", kept only when momentum != 0. Copying and exceptions are
// optimizer.h's: an SGD does not copy (SGDOptions, a value, does), and a step() that throws
// changes nothing.
//
// Example:
//   optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
//   opt.zero_grad(); loss.backward(); opt.step();
#pragma once
#include "optimizer.h"

namespace heed::optim {

class SGDOptions : public OptimizerCloneableOptions<SGDOptions> {
 public:
  SGDOptions(double lr) : lr_(lr) {}  // implicit, as libtorch's: optim::SGD opt(params, 0.1)
  HEED_ARG(double, lr);
  HEED_ARG(double, momentum) = 0;
  HEED_ARG(double, dampening) = 0;
  HEED_ARG(double, weight_decay) = 0;
  HEED_ARG(bool, nesterov) = false;
};

// optim::SGD(params, SGDOptions(lr)) or SGD(groups, SGDOptions(lr)): the options are required.
class SGD final : public OptimizerBase<SGD, SGDOptions> {
 public:
  using OptimizerBase::OptimizerBase;
  static constexpr const char* kName = "SGD";
  static void check(const SGDOptions& o);
  static std::vector<std::string> slots(const SGDOptions& o);
  static void update(const SGDOptions& o, int64_t step, const Tensor& param, const Tensor& grad,
                     std::vector<Tensor>& state);
};

}  // namespace heed::optim
