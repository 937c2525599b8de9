// adam.cpp - Adam's and AdamW's update: one fused loop over each parameter (the
// equations: adam.h).
#include "adam.h"

#include <algorithm>
#include <cmath>

#include "../core/error.h"
#include "../core/parallel.h"

namespace heed::optim {

void Adam::check_options(const OptimizerOptions& options) const {
  // Exactly this optimizer's options type: AdamOptions and AdamWOptions are not
  // interchangeable (AdamW with AdamOptions would decay with weight_decay 0).
  const bool ours = decoupled_ ? dynamic_cast<const AdamWOptions*>(&options) != nullptr
                               : dynamic_cast<const AdamOptions*>(&options) != nullptr;
  HEED_CHECK(ours, name(), "a param group has the options of another optimizer (use ",
             decoupled_ ? "AdamWOptions" : "AdamOptions", ")");
  const auto* o = static_cast<const AdamFamilyOptions*>(&options);
  const auto [beta1, beta2] = o->betas();
  HEED_CHECK(o->lr() >= 0, name(), "invalid learning rate ", o->lr(), " (must be >= 0)");
  HEED_CHECK(o->eps() >= 0, name(), "invalid eps ", o->eps(), " (must be >= 0)");
  HEED_CHECK(beta1 >= 0 && beta1 < 1, name(), "invalid beta1 ", beta1, " (must be in [0, 1))");
  HEED_CHECK(beta2 >= 0 && beta2 < 1, name(), "invalid beta2 ", beta2, " (must be in [0, 1))");
  HEED_CHECK(o->weight_decay() >= 0, name(), "invalid weight_decay ", o->weight_decay(),
             " (must be >= 0)");
}

std::vector<std::string> Adam::slots(const OptimizerOptions& options) const {
  if (static_cast<const AdamFamilyOptions&>(options).amsgrad()) return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  return {"exp_avg", "exp_avg_sq"};
}

// The scalars (bias corrections, step size) are computed in double and rounded once to
// `real`, as PyTorch computes them in Python; the loop itself is in `real`, operation for
// operation as PyTorch's single-tensor path orders it.
void Adam::update(const OptimizerOptions& options, const Tensor& param, const Tensor& grad,
                  std::vector<Tensor>& state) {
  const auto& o = static_cast<const AdamFamilyOptions&>(options);
  const double t = double(step_count());
  const auto [beta1, beta2] = o.betas();
  const real b1 = real(beta1), b2 = real(beta2);
  const real one_minus_b1 = real(1 - beta1), one_minus_b2 = real(1 - beta2);
  const real step_size = real(o.lr() / (1 - std::pow(beta1, t)));   // lr / bias_correction1
  const real bc2_sqrt = real(std::sqrt(1 - std::pow(beta2, t)));    // sqrt(bias_correction2)
  const real eps = real(o.eps());
  const real l2 = decoupled_ ? real(0) : real(o.weight_decay());
  const real decay = decoupled_ ? real(1 - o.lr() * o.weight_decay()) : real(1);
  real* p = param.data();
  const real* g = grad.data();
  real* m = state[0].data();
  real* v = state[1].data();
  real* v_max = o.amsgrad() ? state[2].data() : nullptr;

  parallel_for(param.numel(), kGrainElementwise, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (decoupled_) p[i] *= decay;                      // p = p * (1 - lr * weight_decay)
      real gi = g[i];
      if (l2 != 0) gi += l2 * p[i];                       // g = g + weight_decay * p
      m[i] = m[i] * b1 + one_minus_b1 * gi;               // m = beta1 * m + (1 - beta1) * g
      v[i] = v[i] * b2 + one_minus_b2 * gi * gi;          // v = beta2 * v + (1 - beta2) * g^2
      real vi = v[i];
      if (v_max) vi = v_max[i] = std::max(v_max[i], v[i]);
      const real denom = std::sqrt(vi) / bc2_sqrt + eps;  // sqrt(v_hat) + eps
      p[i] -= step_size * (m[i] / denom);                 // p = p - lr * m_hat / denom
    }
  });
}

}  // namespace heed::optim
