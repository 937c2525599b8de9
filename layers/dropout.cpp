// dropout.cpp - nn::Dropout: checks p, and applies heed::dropout while training.
#include "dropout.h"

#include "../autograd/ops/dropout.h"
#include "../core/error.h"
#include "repr.h"

namespace heed::nn {

DropoutImpl::DropoutImpl(const DropoutOptions& opts) : options(opts) {
  HEED_CHECK(options.p() >= 0 && options.p() < 1, "Dropout", "p must be in [0, 1); got ",
             options.p());
}

Tensor DropoutImpl::forward(const Tensor& x) { return dropout(x, options.p(), is_training()); }

std::string DropoutImpl::repr() const {
  return "Dropout(p=" + detail::py_float(options.p()) + ", inplace=False)";
}

}  // namespace heed::nn
