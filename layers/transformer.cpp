// transformer.cpp - checking and printing the options the Transformer layers share.
#include "transformer.h"

#include "../core/error.h"
#include "feed_forward.h"
#include "repr.h"

namespace heed::nn {

void TransformerLayerOptions::check(const char* op) const {
  HEED_CHECK(d_model_ > 0 && nhead_ > 0 && dim_feedforward_ > 0, op,
             "d_model, nhead and dim_feedforward must be > 0; got ", d_model_, ", ", nhead_,
             " and ", dim_feedforward_);
  HEED_CHECK(d_model_ % nhead_ == 0, op, "d_model ", d_model_, " must be divisible by nhead ",
             nhead_);
  HEED_CHECK(dropout_ >= 0 && dropout_ < 1, op, "dropout must be in [0, 1); got ", dropout_);
  HEED_CHECK(layer_norm_eps_ >= 0, op, "layer_norm_eps must be >= 0; got ", layer_norm_eps_);
  check_activation(op, activation_);
}

std::string TransformerLayerOptions::repr_args() const {
  return "d_model=" + std::to_string(d_model_) + ", nhead=" + std::to_string(nhead_) +
         ", dim_feedforward=" + std::to_string(dim_feedforward_) +
         ", dropout=" + detail::py_float(dropout_) + ", activation='" + activation_ +
         "', layer_norm_eps=" + detail::py_float(layer_norm_eps_) +
         ", norm_first=" + detail::py_bool(norm_first_) + (batch_first_ ? "" : ", batch_first=False");
}

void check_sequence(const char* op, const char* name, const Tensor& x, int64_t E) {
  HEED_CHECK(x.defined() && x.dim() == 3 && x.size(2) == E, op, name, " must be (B, T, ", E,
             ") (batch-first, d_model ", E, "); got ", x.defined() ? x.shape() : Shape{});
}

}  // namespace heed::nn
