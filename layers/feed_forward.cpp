// feed_forward.cpp - FFN(x) = linear2(dropout(act(linear1(x)))), and its module.
#include "feed_forward.h"

#include "../autograd/ops/linear.h"
#include "../autograd/ops/unary.h"
#include "../core/error.h"
#include "repr.h"

namespace heed::nn {

void check_activation(const char* op, const std::string& activation) {
  HEED_CHECK(activation == "relu" || activation == "gelu", op,
             "activation must be 'relu' or 'gelu'; got '", activation, "'");
}

Tensor feed_forward(const char* op, const Tensor& x, LinearImpl& linear1, const std::string& activation,
                    DropoutImpl& dropout, LinearImpl& linear2) {
  const int64_t E = linear1.options.in_features();
  HEED_CHECK(x.defined() && x.dim() >= 1 && x.size(-1) == E, op, "feed-forward input ",
             x.defined() ? x.shape() : Shape{}, " does not end in d_model ", E);
  // (..., F): GELU as linear1's epilogue (autograd/ops/linear.h), which keeps only its derivative;
  // relu after linear1 keeps only its output
  const Tensor a = activation == "gelu" ? linear_gelu(x, linear1.weight, linear1.bias) : relu(linear1.forward(x));
  return linear2.forward(dropout.forward(a));  // (..., E)
}

PositionwiseFeedForwardImpl::PositionwiseFeedForwardImpl(const FeedForwardOptions& opts) : options(opts) {
  HEED_CHECK(options.d_model() > 0 && options.dim_feedforward() > 0, "PositionwiseFeedForward",
             "d_model and dim_feedforward must be > 0; got ", options.d_model(), " and ",
             options.dim_feedforward());
  check_activation("PositionwiseFeedForward", options.activation());
  linear1 = register_module("linear1", Linear(options.d_model(), options.dim_feedforward()));
  dropout = register_module("dropout", Dropout(options.dropout()));
  linear2 = register_module("linear2", Linear(options.dim_feedforward(), options.d_model()));
}

Tensor PositionwiseFeedForwardImpl::forward(const Tensor& x) {
  return feed_forward("PositionwiseFeedForward", x, *linear1, options.activation(), *dropout, *linear2);
}

std::string PositionwiseFeedForwardImpl::repr() const {
  return "PositionwiseFeedForward(d_model=" + std::to_string(options.d_model()) +
         ", dim_feedforward=" + std::to_string(options.dim_feedforward()) +
         ", dropout=" + detail::py_float(options.dropout()) + ", activation='" +
         options.activation() + "')";
}

}  // namespace heed::nn
