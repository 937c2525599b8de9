// rmsprop.cpp - RMSprop's checks and update: one fused loop over each parameter (the
// equations: rmsprop.h).
#include "rmsprop.h"

#include <cmath>

#include "../core/error.h"
#include "../core/parallel.h"

namespace heed::optim {

void RMSprop::check(const RMSpropOptions& o) {
  HEED_CHECK(o.lr() >= 0, kName, "invalid learning rate ", o.lr(), " (must be >= 0)");
  HEED_CHECK(o.eps() >= 0, kName, "invalid eps ", o.eps(), " (must be >= 0)");
  HEED_CHECK(o.momentum() >= 0, kName, "invalid momentum ", o.momentum(), " (must be >= 0)");
  HEED_CHECK(o.weight_decay() >= 0, kName, "invalid weight_decay ", o.weight_decay(), " (must be >= 0)");
  HEED_CHECK(o.alpha() >= 0, kName, "invalid alpha ", o.alpha(), " (must be >= 0)");
}

std::vector<std::string> RMSprop::slots(const RMSpropOptions& o) {
  std::vector<std::string> names{"square_avg"};
  if (o.momentum() > 0) names.push_back("momentum_buffer");
  if (o.centered()) names.push_back("grad_avg");
  return names;
}

// The scalars are computed in double and rounded once to `real`, as PyTorch passes Python
// floats to its float kernels; the loop is in `real`, in the order of PyTorch's
// _single_tensor_rmsprop (addcmul: v + (1 - alpha) * g * g; addcdiv: b + g / avg).
void RMSprop::update(const RMSpropOptions& o, int64_t /*step: no bias correction*/, const Tensor& param,
                     const Tensor& grad, std::vector<Tensor>& state) {
  const real lr = real(o.lr()), alpha = real(o.alpha()), one_minus_alpha = real(1 - o.alpha());
  const real eps = real(o.eps()), wd = real(o.weight_decay()), mu = real(o.momentum());
  param.bump_version();  // written in place below (tensor.h: version)
  real* p = param.data();
  const real* g = grad.data();
  real* v = state[0].data();                                               // square_avg
  real* b = o.momentum() > 0 ? state[1].data() : nullptr;                  // momentum_buffer
  real* m = o.centered() ? state[o.momentum() > 0 ? 2 : 1].data() : nullptr;  // grad_avg

  parallel_for(param.numel(), kGrainElementwise, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      real gi = g[i];
      if (wd != 0) gi += wd * p[i];                             // g = g + weight_decay * p
      v[i] = v[i] * alpha + one_minus_alpha * gi * gi;          // v = alpha * v + (1 - alpha) * g^2
      real avg_sq = v[i];
      if (m) {
        m[i] = m[i] * alpha + one_minus_alpha * gi;             // m = alpha * m + (1 - alpha) * g
        avg_sq -= m[i] * m[i];                                  // v - m^2
      }
      const real avg = std::sqrt(avg_sq) + eps;                 // avg = sqrt(v - m^2) + eps
      if (b) {
        b[i] = b[i] * mu + gi / avg;                            // b = momentum * b + g / avg
        p[i] -= lr * b[i];                                      // p = p - lr * b
      } else {
        p[i] -= lr * (gi / avg);                                // p = p - lr * g / avg
      }
    }
  });
}

}  // namespace heed::optim
