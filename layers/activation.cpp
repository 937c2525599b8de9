// activation.cpp - the activation modules: each forward is one op from autograd/unary.h.
#include "activation.h"

#include "../autograd/unary.h"
#include "../core/error.h"
#include "repr.h"

namespace heed::nn {

Tensor ReLU::forward(const Tensor& x) { return relu(x); }
std::string ReLU::repr() const { return "ReLU()"; }

GELU::GELU(const GELUOptions& opts) : options(opts) {
  HEED_CHECK(options.approximate() == "none" || options.approximate() == "tanh", "GELU",
             "approximate must be 'none' or 'tanh'; got '", options.approximate(), "'");
}
Tensor GELU::forward(const Tensor& x) { return gelu(x, options.approximate()); }
std::string GELU::repr() const { return "GELU(approximate='" + options.approximate() + "')"; }

Tensor Tanh::forward(const Tensor& x) { return tanh(x); }
std::string Tanh::repr() const { return "Tanh()"; }

Tensor Sigmoid::forward(const Tensor& x) { return sigmoid(x); }
std::string Sigmoid::repr() const { return "Sigmoid()"; }

ELU::ELU(const ELUOptions& opts) : options(opts) {}
Tensor ELU::forward(const Tensor& x) { return elu(x, real(options.alpha())); }
std::string ELU::repr() const { return "ELU(alpha=" + detail::py_float(options.alpha()) + ")"; }

}  // namespace heed::nn
