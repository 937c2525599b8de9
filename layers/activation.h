// activation.h - elementwise nonlinearities as modules, as torch::nn's (no parameters).
//
//   ReLU      y = max(0, x)
//   GELU      y = x * Phi(x)   ("none", exact; Hendrycks & Gimpel 2016)
//             y = x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))   ("tanh")
//   Tanh      y = tanh(x)
//   Sigmoid   y = 1 / (1 + e^-x)
//   ELU       y = x if x > 0 else alpha * (e^x - 1)           (Clevert et al. 2015)
//   LeakyReLU y = x if x > 0 else negative_slope * x         (Maas et al. 2013)
// Each forwards to the op of the same name in autograd/ops/unary.h.
//
// Example:
//   auto act = nn::GELU(nn::GELUOptions().approximate("tanh"));
//   Tensor h = act->forward(x);   // same shape as x
#pragma once
#include <string>

#include "module.h"

namespace heed::nn {

class ReLUImpl : public Cloneable<ReLUImpl> {
 public:
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // ReLU()
};
HEED_MODULE(ReLU);

class GELUOptions {
 public:
  HEED_ARG(std::string, approximate) = "none";  // or "tanh"
};

class GELUImpl : public Cloneable<GELUImpl> {
 public:
  explicit GELUImpl(const GELUOptions& options = GELUOptions());  // approximate: "none" or "tanh"
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // GELU(approximate='none')
  GELUOptions options;
};
HEED_MODULE(GELU);

class TanhImpl : public Cloneable<TanhImpl> {
 public:
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // Tanh()
};
HEED_MODULE(Tanh);

class SigmoidImpl : public Cloneable<SigmoidImpl> {
 public:
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // Sigmoid()
};
HEED_MODULE(Sigmoid);

class ELUOptions {
 public:
  HEED_ARG(double, alpha) = 1.0;
};

class ELUImpl : public Cloneable<ELUImpl> {
 public:
  explicit ELUImpl(const ELUOptions& options = ELUOptions());
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // ELU(alpha=1.0)
  ELUOptions options;
};
HEED_MODULE(ELU);

class LeakyReLUOptions {
 public:
  HEED_ARG(double, negative_slope) = 0.01;
};

class LeakyReLUImpl : public Cloneable<LeakyReLUImpl> {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = LeakyReLUOptions());
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // LeakyReLU(negative_slope=0.01)
  LeakyReLUOptions options;
};
HEED_MODULE(LeakyReLU);

}  // namespace heed::nn
