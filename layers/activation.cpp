// activation.cpp - the activation modules: each forward is one op from autograd/ops/unary.h.
#include "activation.h"

#include "../autograd/ops/unary.h"
#include "../core/error.h"
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

}  // namespace heed::nn
