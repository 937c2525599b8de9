// activation.cpp - the activation modules: each forward is one op from autograd/ops/unary.h.
#include "activation.h"

#include "../autograd/ops/unary.h"
#include "../core/error.h"
#include "init.h"
#include "repr.h"

namespace heed::nn {

Tensor ReLUImpl::forward(const Tensor& x) { return relu(x); }
std::string ReLUImpl::repr() const { return "ReLU()"; }

GELUImpl::GELUImpl(const GELUOptions& opts) : options(opts) {
  HEED_CHECK(options.approximate() == "none" || options.approximate() == "tanh", "GELU",
             "approximate must be 'none' or 'tanh'; got '", options.approximate(), "'");
}
Tensor GELUImpl::forward(const Tensor& x) { return gelu(x, options.approximate()); }
std::string GELUImpl::repr() const { return "GELU(approximate='" + options.approximate() + "')"; }

Tensor TanhImpl::forward(const Tensor& x) { return tanh(x); }
std::string TanhImpl::repr() const { return "Tanh()"; }

Tensor SigmoidImpl::forward(const Tensor& x) { return sigmoid(x); }
std::string SigmoidImpl::repr() const { return "Sigmoid()"; }

ELUImpl::ELUImpl(const ELUOptions& opts) : options(opts) {}
Tensor ELUImpl::forward(const Tensor& x) { return elu(x, real(options.alpha())); }
std::string ELUImpl::repr() const { return "ELU(alpha=" + detail::py_float(options.alpha()) + ")"; }

LeakyReLUImpl::LeakyReLUImpl(const LeakyReLUOptions& opts) : options(opts) {}
Tensor LeakyReLUImpl::forward(const Tensor& x) { return leaky_relu(x, real(options.negative_slope())); }
std::string LeakyReLUImpl::repr() const {
  return "LeakyReLU(negative_slope=" + detail::py_float(options.negative_slope()) + ")";
}

SoftplusImpl::SoftplusImpl(const SoftplusOptions& opts) : options(opts) {}
Tensor SoftplusImpl::forward(const Tensor& x) {
  return softplus(x, real(options.beta()), real(options.threshold()));
}
std::string SoftplusImpl::repr() const {
  return "Softplus(beta=" + detail::py_float(options.beta()) +
         ", threshold=" + detail::py_float(options.threshold()) + ")";
}

Tensor MishImpl::forward(const Tensor& x) { return mish(x); }
std::string MishImpl::repr() const { return "Mish()"; }

PReLUImpl::PReLUImpl(const PReLUOptions& opts) : options(opts) {
  HEED_CHECK(options.num_parameters() >= 1, "PReLU", "num_parameters must be >= 1, got ",
             options.num_parameters());
  weight = register_parameter("weight", empty({options.num_parameters()}));
  reset_parameters();
}
void PReLUImpl::reset_parameters() { init::constant_(weight, options.init()); }
Tensor PReLUImpl::forward(const Tensor& x) { return prelu(x, weight); }
std::string PReLUImpl::repr() const {
  return "PReLU(num_parameters=" + std::to_string(options.num_parameters()) + ")";
}

}  // namespace heed::nn
