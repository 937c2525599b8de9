// adam.h - optim::Adam and optim::AdamW, exactly torch.optim.Adam / AdamW.
//
// Adam (Kingma & Ba 2015, https://arxiv.org/abs/1412.6980), at step t = 1, 2, ...:
//   g = g + weight_decay * p                      (Adam: L2 added to the gradient)
//   p = p * (1 - lr * weight_decay)               (AdamW instead: decoupled weight decay,
//                                                  Loshchilov & Hutter, arXiv:1711.05101)
//   m = beta1 * m + (1 - beta1) * g               (state "exp_avg")
//   v = beta2 * v + (1 - beta2) * g * g           (state "exp_avg_sq")
//   v_max = max(v_max, v)                         (amsgrad only: state "max_exp_avg_sq")
//   denom = sqrt(v) / sqrt(1 - beta2^t) + eps     (v_max with amsgrad)
//   p = p - lr / (1 - beta1^t) * m / denom
// eps sits outside the bias-corrected square root, where PyTorch puts it: the update is
// m_hat / (sqrt(v_hat) + eps), not m_hat / sqrt(v_hat + eps).
//
// AdamWOptions differs from AdamOptions only in its default weight_decay, 0.01 (PyTorch's).
// They are two unrelated types and each optimizer takes only its own, as in libtorch:
// optim::AdamW(params, optim::AdamOptions(0.1)) does not compile (it would otherwise run
// with weight decay 0), nor does optim::Adam(params, optim::AdamWOptions()). A param group
// with the other's options is a heed::Error when it is added.
//
// Example:
//   optim::Adam opt(model->parameters(), optim::AdamOptions(1e-3).betas({0.9, 0.98}).eps(1e-9));
//   optim::AdamW opt(model->parameters(), optim::AdamWOptions(3e-4));
#pragma once
#include <type_traits>
#include <utility>

#include "optimizer.h"

namespace heed::optim {

class Adam;
class AdamW;

namespace detail {
// What the options of Adam and AdamW hold and what their update reads. `Target` is the
// optimizer they are for: it makes AdamOptions and AdamWOptions two unrelated types, and
// picks the default weight_decay (0 for Adam, 0.01 for AdamW, PyTorch's).
template <class Target>
class AdamFamilyOptions final : public OptimizerOptions {
 public:
  AdamFamilyOptions(double lr = 1e-3)  // implicit, as libtorch's: optim::Adam opt(params, 1e-3)
      : lr_(lr), weight_decay_(std::is_same_v<Target, AdamW> ? 1e-2 : 0) {}
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<AdamFamilyOptions>(*this);
  }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }

  using Betas = std::pair<double, double>;
  HEED_ARG(double, lr);
  HEED_ARG(Betas, betas) = {0.9, 0.999};
  HEED_ARG(double, eps) = 1e-8;
  HEED_ARG(double, weight_decay);  // set by the constructor
  HEED_ARG(bool, amsgrad) = false;
};
}  // namespace detail

using AdamOptions = detail::AdamFamilyOptions<Adam>;
using AdamWOptions = detail::AdamFamilyOptions<AdamW>;

class Adam : public Optimizer {
 public:
  Adam(const std::vector<Tensor>& params, const AdamOptions& defaults = AdamOptions())
      : Adam(std::vector<ParamGroup>{ParamGroup(params)}, defaults) {}
  Adam(const std::vector<ParamGroup>& groups, const AdamOptions& defaults = AdamOptions())
      : Adam(defaults, /*decoupled_weight_decay=*/false) {
    init(groups);
  }
  const char* name() const override { return decoupled_ ? "AdamW" : "Adam"; }

 protected:
  Adam(const OptimizerOptions& defaults, bool decoupled_weight_decay)
      : Optimizer(defaults), decoupled_(decoupled_weight_decay) {}
  void check_options(const OptimizerOptions& options) const override;
  std::vector<std::string> slots(const OptimizerOptions& options) const override;
  void update(const OptimizerOptions& options, const Tensor& param, const Tensor& grad,
              std::vector<Tensor>& state) override;

 private:
  bool decoupled_;  // AdamW
};

// Adam's update with decoupled weight decay; takes AdamWOptions only.
class AdamW : public Adam {
 public:
  AdamW(const std::vector<Tensor>& params, const AdamWOptions& defaults = AdamWOptions())
      : AdamW(std::vector<ParamGroup>{ParamGroup(params)}, defaults) {}
  AdamW(const std::vector<ParamGroup>& groups, const AdamWOptions& defaults = AdamWOptions())
      : Adam(defaults, /*decoupled_weight_decay=*/true) {
    init(groups);
  }
};

}  // namespace heed::optim
