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
// state slot "momentum_buffer", kept only when momentum != 0.
//
// Example:
//   optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
//   opt.zero_grad(); loss.backward(); opt.step();
#pragma once
#include "optimizer.h"

namespace heed::optim {

class SGDOptions : public OptimizerOptions {
 public:
  SGDOptions(double lr) : lr_(lr) {}  // implicit, as libtorch's: optim::SGD opt(params, 0.1)
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<SGDOptions>(*this); }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }

  HEED_ARG(double, lr);
  HEED_ARG(double, momentum) = 0;
  HEED_ARG(double, dampening) = 0;
  HEED_ARG(double, weight_decay) = 0;
  HEED_ARG(bool, nesterov) = false;
};

class SGD : public Optimizer {
 public:
  SGD(const std::vector<Tensor>& params, const SGDOptions& defaults)
      : SGD(std::vector<ParamGroup>{ParamGroup(params)}, defaults) {}
  SGD(const std::vector<ParamGroup>& groups, const SGDOptions& defaults);
  const char* name() const override { return "SGD"; }

 protected:
  void check_options(const OptimizerOptions& options) const override;
  std::vector<std::string> slots(const OptimizerOptions& options) const override;
  void update(const OptimizerOptions& options, const Tensor& param, const Tensor& grad,
              std::vector<Tensor>& state) override;
};

}  // namespace heed::optim
