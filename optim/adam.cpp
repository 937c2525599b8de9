// adam.cpp - Adam's and AdamW's checks and update: one fused loop over each parameter (the
// equations: adam.h).
#include "adam.h"

#include <algorithm>
#include <utility>
#include <cmath>

#include "../core/error.h"
#include "../core/parallel.h"

namespace heed::optim {

template <bool kDecoupled>
void AdamFamily<kDecoupled>::check(const Options& o) {
  const auto [beta1, beta2] = o.betas();
  HEED_CHECK(o.lr() >= 0, kName, "invalid learning rate ", o.lr(), " (must be >= 0)");
  HEED_CHECK(o.eps() >= 0, kName, "invalid eps ", o.eps(), " (must be >= 0)");
  HEED_CHECK(beta1 >= 0 && beta1 < 1, kName, "invalid beta1 ", beta1, " (must be in [0, 1))");
  HEED_CHECK(beta2 >= 0 && beta2 < 1, kName, "invalid beta2 ", beta2, " (must be in [0, 1))");
  HEED_CHECK(o.weight_decay() >= 0, kName, "invalid weight_decay ", o.weight_decay(),
             " (must be >= 0)");
}

template <bool kDecoupled>
std::vector<std::string> AdamFamily<kDecoupled>::slots(const Options& o) {
  if (o.amsgrad()) return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  return {"exp_avg", "exp_avg_sq"};
}

namespace {

// The constants of one step, computed once per parameter.
struct AdamStep {
  real b1, b2, one_minus_b1, one_minus_b2, step_size, bc2_sqrt, eps, l2, decay;
};

// One step over n elements. The choices (L2 term, amsgrad) are template parameters, so the
// loop has no branch in it and vectorises (with the branches inside, GCC keeps it scalar;
// `perf record build/bench/bench_models --steps 20 gpt_baby` shows the update's share of a
// GPT step). __restrict: p, g, m, v never overlap.
template <bool kL2, bool kAmsgrad>
void adam_loop(real* __restrict p, const real* __restrict g, real* __restrict m,
               real* __restrict v, real* __restrict v_max, int64_t begin, int64_t end,
               const AdamStep& c) {
  for (int64_t i = begin; i < end; ++i) {
    p[i] *= c.decay;                                        // p = p * (1 - lr * weight_decay) (AdamW; 1 for Adam)
    real gi = g[i];
    if constexpr (kL2) gi += c.l2 * p[i];                   // g = g + weight_decay * p (Adam)
    m[i] = m[i] * c.b1 + c.one_minus_b1 * gi;               // m = beta1 * m + (1 - beta1) * g
    v[i] = v[i] * c.b2 + c.one_minus_b2 * gi * gi;          // v = beta2 * v + (1 - beta2) * g^2
    real vi = v[i];
    if constexpr (kAmsgrad) vi = v_max[i] = v[i] > v_max[i] || v[i] != v[i] ? v[i] : v_max[i];  // NaN stays
    const real denom = std::sqrt(vi) / c.bc2_sqrt + c.eps;  // sqrt(v_hat) + eps
    p[i] -= c.step_size * (m[i] / denom);                   // p = p - lr * m_hat / denom
  }
}

}  // namespace

// The scalars (bias corrections, step size) are computed in double and rounded once to
// `real`, as PyTorch computes them in Python; the loop itself is in `real`, operation for
// operation as PyTorch's single-tensor path orders it.
template <bool kDecoupled>
void AdamFamily<kDecoupled>::update(const Options& o, int64_t step, const Tensor& param,
                                    const Tensor& grad, std::vector<Tensor>& state) {
  const double t = double(step);
  const auto [beta1, beta2] = o.betas();
  AdamStep c;
  c.b1 = real(beta1), c.b2 = real(beta2);
  c.one_minus_b1 = real(1 - beta1), c.one_minus_b2 = real(1 - beta2);
  c.step_size = real(o.lr() / (1 - std::pow(beta1, t)));  // lr / bias_correction1
  c.bc2_sqrt = real(std::sqrt(1 - std::pow(beta2, t)));   // sqrt(bias_correction2)
  c.eps = real(o.eps());
  c.l2 = kDecoupled ? real(0) : real(o.weight_decay());
  c.decay = kDecoupled ? real(1 - o.lr() * o.weight_decay()) : real(1);  // x * 1 is x, bit for bit
  param.bump_version();  // written in place below (tensor.h: version)
  real* p = param.data();
  const real* g = grad.data();
  real* m = state[0].data();
  real* v = state[1].data();
  real* v_max = o.amsgrad() ? state[2].data() : nullptr;
  const bool l2 = c.l2 != 0;
  parallel_for(param.numel(), kGrainElementwise, [&](int64_t begin, int64_t end) {
    if (l2 && v_max) adam_loop<true, true>(p, g, m, v, v_max, begin, end, c);
    else if (l2) adam_loop<true, false>(p, g, m, v, v_max, begin, end, c);
    else if (v_max) adam_loop<false, true>(p, g, m, v, v_max, begin, end, c);
    else adam_loop<false, false>(p, g, m, v, v_max, begin, end, c);
  });
}

template class AdamFamily<false>;  // Adam
template class AdamFamily<true>;   // AdamW

}  // namespace heed::optim
