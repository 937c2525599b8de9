// activation.h - elementwise nonlinearities as modules, as torch::nn's (no parameters).
//
//   ReLU      y = max(0, x)
//   GELU      y = x * Phi(x)   ("none", exact; Hendrycks & Gimpel 2016)
//             y = x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))   ("tanh")
//   Tanh      y = tanh(x)
//   Sigmoid   y = 1 / (1 + e^-x)
//   ELU       y = x if x > 0 else alpha * (e^x - 1)           (Clevert et al. 2015)
// Each forwards to the op of the same name in autograd/unary.h.
//
// Example:
//   auto act = std::make_shared<nn::GELU>(nn::GELUOptions().approximate("tanh"));
//   Tensor h = act->forward(x);   // same shape as x
#pragma once
#include <string>

#include "module.h"

namespace heed::nn {

class ReLU : public Module {
 public:
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // ReLU()
};

class GELUOptions {
 public:
  HEED_ARG(std::string, approximate) = "none";  // or "tanh"
};

class GELU : public Module {
 public:
  explicit GELU(const GELUOptions& options = GELUOptions());  // approximate: "none" or "tanh"
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // GELU(approximate='none')
  GELUOptions options;
};

class Tanh : public Module {
 public:
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // Tanh()
};

class Sigmoid : public Module {
 public:
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // Sigmoid()
};

class ELUOptions {
 public:
  HEED_ARG(double, alpha) = 1.0;
};

class ELU : public Module {
 public:
  explicit ELU(const ELUOptions& options = ELUOptions());
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // ELU(alpha=1.0)
  ELUOptions options;
};

}  // namespace heed::nn
