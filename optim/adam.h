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
// Adam and AdamW are one class template, AdamFamily<kDecoupled>, and its options one,
// AdamFamilyOptions<kDecoupled>; the flag is the only thing that tells them apart. It picks
// the name, the default weight_decay (0 for Adam, 0.01 for AdamW, PyTorch's) and the line of
// the update above that weight_decay enters. It also makes AdamOptions and AdamWOptions two
// unrelated types, each optimizer taking only its own, as in libtorch:
// optim::AdamW(params, optim::AdamOptions(0.1)) does not compile (it would otherwise run
// with weight decay 0), nor does optim::Adam(params, optim::AdamWOptions()). A param group
// with the other's options is a heed::Error when it is added. Copying and exceptions are
// optimizer.h's: an optimizer does not copy (its options, values, do), and a step() that
// throws changes nothing.
//
// Example:
//   optim::Adam opt(model->parameters(), optim::AdamOptions(1e-3).betas({0.9, 0.98}).eps(1e-9));
//   optim::AdamW opt(model->parameters(), optim::AdamWOptions(3e-4));
#pragma once
#include <utility>

#include "optimizer.h"

namespace heed::optim {

template <bool kDecoupled>
class AdamFamilyOptions : public OptimizerCloneableOptions<AdamFamilyOptions<kDecoupled>> {
 public:
  AdamFamilyOptions(double lr = 1e-3) : lr_(lr) {}  // implicit, as libtorch's: optim::Adam opt(params, 1e-3)
  using Betas = std::pair<double, double>;
  HEED_ARG(double, lr);
  HEED_ARG(Betas, betas) = {0.9, 0.999};
  HEED_ARG(double, eps) = 1e-8;
  HEED_ARG(double, weight_decay) = kDecoupled ? 1e-2 : 0;
  HEED_ARG(bool, amsgrad) = false;
};

using AdamOptions = AdamFamilyOptions<false>;
using AdamWOptions = AdamFamilyOptions<true>;

template <bool kDecoupled>
class AdamFamily final : public OptimizerBase<AdamFamily<kDecoupled>, AdamFamilyOptions<kDecoupled>> {
 public:
  using Options = AdamFamilyOptions<kDecoupled>;
  using OptimizerBase<AdamFamily, Options>::OptimizerBase;
  static constexpr const char* kName = kDecoupled ? "AdamW" : "Adam";
  static void check(const Options& o);
  static std::vector<std::string> slots(const Options& o);
  static void update(const Options& o, int64_t step, const Tensor& param, const Tensor& grad,
                     std::vector<Tensor>& state);
};

// Both are compiled once, in adam.cpp.
extern template class AdamFamily<false>;
extern template class AdamFamily<true>;

using Adam = AdamFamily<false>;
using AdamW = AdamFamily<true>;

}  // namespace heed::optim
