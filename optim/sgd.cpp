// sgd.cpp - SGD's update: one fused loop over each parameter (the equations: sgd.h).
#include "sgd.h"

#include "../core/error.h"
#include "../core/parallel.h"

namespace heed::optim {

void SGD::check(const SGDOptions& o) {
  HEED_CHECK(o.lr() >= 0, "SGD", "invalid learning rate ", o.lr(), " (must be >= 0)");
  HEED_CHECK(o.momentum() >= 0, "SGD", "invalid momentum ", o.momentum(), " (must be >= 0)");
  HEED_CHECK(o.weight_decay() >= 0, "SGD", "invalid weight_decay ", o.weight_decay(), " (must be >= 0)");
  HEED_CHECK(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0), "SGD",
             "Nesterov momentum requires a momentum > 0 and zero dampening (got momentum ",
             o.momentum(), ", dampening ", o.dampening(), ")");
}

std::vector<std::string> SGD::slots(const SGDOptions& o) {
  if (o.momentum() == 0) return {};
  return {"momentum_buffer"};
}

// The scalars are computed in double and rounded once to `real`, as PyTorch passes
// Python floats to its float kernels; the loop itself is in `real`.
void SGD::update(const SGDOptions& o, int64_t step, const Tensor& param, const Tensor& grad,
                 std::vector<Tensor>& state) {
  const real lr = real(o.lr()), wd = real(o.weight_decay()), mu = real(o.momentum());
  const real keep = real(1 - o.dampening());
  const bool first = step == 1, nesterov = o.nesterov();
  param.bump_version();  // written in place below (tensor.h: version)
  real* p = param.data();
  const real* g = grad.data();
  real* b = state.empty() ? nullptr : state[0].data();  // momentum buffer, if momentum != 0

  parallel_for(param.numel(), kGrainElementwise, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      real d = g[i];
      if (wd != 0) d += wd * p[i];                       // d = g + weight_decay * p
      if (b) {
        b[i] = first ? d : mu * b[i] + keep * d;         // b = momentum * b + (1 - dampening) * d
        d = nesterov ? d + mu * b[i] : b[i];
      }
      p[i] -= lr * d;                                    // p = p - lr * d
    }
  });
}

}  // namespace heed::optim
