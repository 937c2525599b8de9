// activation.h - elementwise nonlinearities as modules, as torch::nn's.
//
//   ReLU      y = max(0, x)
//   GELU      y = x * Phi(x)   ("none", exact; Hendrycks & Gimpel 2016)
//             y = x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))   ("tanh")
//   Tanh      y = tanh(x)
//   Sigmoid   y = 1 / (1 + e^-x)
//   ELU       y = x if x > 0 else alpha * (e^x - 1)           (Clevert et al. 2015)
//   LeakyReLU y = x if x > 0 else negative_slope * x         (Maas et al. 2013)
//   Softplus  y = log(1 + e^(beta x)) / beta, x where beta x > threshold   (Dugas et al. 2001)
//   Mish      y = x * tanh(softplus(x))                      (Misra 2019)
//   PReLU     y = x if x > 0 else w * x, w learned: one slope, or one per channel (dim 1)
//             (He et al. 2015, "Delving Deep into Rectifiers"); the only one with parameters
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

class SoftplusOptions {
 public:
  HEED_ARG(double, beta) = 1;
  HEED_ARG(double, threshold) = 20;
};

class SoftplusImpl : public Cloneable<SoftplusImpl> {
 public:
  explicit SoftplusImpl(const SoftplusOptions& options = SoftplusOptions());
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // Softplus(beta=1.0, threshold=20.0)
  SoftplusOptions options;
};
HEED_MODULE(Softplus);

class MishImpl : public Cloneable<MishImpl> {
 public:
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // Mish()
};
HEED_MODULE(Mish);

class PReLUOptions {
 public:
  HEED_ARG(int64_t, num_parameters) = 1;  // 1, or the channel count C (dim 1 of the input)
  HEED_ARG(double, init) = 0.25;          // every slope's starting value
};

class PReLUImpl : public Cloneable<PReLUImpl> {
 public:
  explicit PReLUImpl(const PReLUOptions& options = PReLUOptions());
  // x: (N, C, ...) or any shape when num_parameters is 1 -> x's shape
  Tensor forward(const Tensor& x);
  std::string repr() const override;  // PReLU(num_parameters=1)
  void reset_parameters();            // weight = init

  PReLUOptions options;
  Tensor weight;  // (num_parameters)
};
HEED_MODULE(PReLU);

}  // namespace heed::nn
