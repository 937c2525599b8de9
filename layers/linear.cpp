// linear.cpp - nn::Linear: parameters, PyTorch's default initialisation, forward.
#include "linear.h"

#include <cmath>

#include "../autograd/ops/linear.h"
#include "../core/error.h"
#include "init.h"
#include "repr.h"

namespace heed::nn {

LinearImpl::LinearImpl(const LinearOptions& opts) : options(opts) {
  HEED_CHECK(options.in_features() >= 0 && options.out_features() >= 0, "Linear",
             "in_features and out_features must be >= 0; got ", options.in_features(), " and ",
             options.out_features());
  weight = register_parameter("weight", empty({options.out_features(), options.in_features()}));
  if (options.bias()) bias = register_parameter("bias", empty({options.out_features()}));
  reset_parameters();
}

// nn.Linear.reset_parameters: kaiming_uniform_(W, a=sqrt(5)) gives the bound
// gain * sqrt(3 / fan_in) with gain = sqrt(2 / (1 + 5)), i.e. 1 / sqrt(fan_in);
// the bias uses the same bound (0 when fan_in is 0).
void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = options.in_features();
    const double bound = fan_in > 0 ? 1 / std::sqrt(double(fan_in)) : 0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& x) {
  HEED_CHECK(x.dim() >= 1 && x.size(-1) == options.in_features(), "Linear", "input ", x.shape(),
             " does not match in_features ", options.in_features(),
             " (expected (..., ", options.in_features(), "))");
  return linear(x, weight, bias);
}

std::string LinearImpl::repr() const {
  return "Linear(in_features=" + std::to_string(options.in_features()) +
         ", out_features=" + std::to_string(options.out_features()) +
         ", bias=" + detail::py_bool(options.bias()) + ")";
}

}  // namespace heed::nn
