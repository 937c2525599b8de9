// dropout.h - nn::Dropout, inverted dropout (Srivastava et al. 2014), as torch::nn::Dropout.
//
//   training:  y = x * m / (1 - p),   m_i ~ Bernoulli(1 - p)      eval:  y = x
//
// Zeroes each element with probability p while training and scales the survivors so the
// expected value is unchanged; in eval() it is the identity. The mask comes from heed's
// seeded generator (heed::manual_seed). The op itself is heed::dropout (autograd/ops/dropout.h).
//
// Example:
//   auto drop = nn::Dropout(0.1);
//   Tensor h = drop->forward(x);   // same shape; drop->eval() makes it the identity
#pragma once
#include "module.h"

namespace heed::nn {

class DropoutOptions {
 public:
  DropoutOptions(double p = 0.5) : p_(p) {}  // implicit, so Dropout(0.1) reads as in libtorch
  HEED_ARG(double, p);
};

class DropoutImpl : public Cloneable<DropoutImpl> {
 public:
  explicit DropoutImpl(const DropoutOptions& options = DropoutOptions());  // p in [0, 1)

  Tensor forward(const Tensor& x);
  std::string repr() const override;  // Dropout(p=0.5, inplace=False)

  DropoutOptions options;
};
HEED_MODULE(Dropout);

}  // namespace heed::nn
