// layer_norm.cpp - nn::LayerNorm: affine parameters and the fused op.
#include "layer_norm.h"

#include "../autograd/ops/layer_norm.h"
#include "../core/error.h"
#include "init.h"
#include "repr.h"

namespace heed::nn {

LayerNormImpl::LayerNormImpl(const LayerNormOptions& opts) : options(opts) {
  const std::vector<int64_t>& ns = options.normalized_shape();
  bool ok = !ns.empty() && int(ns.size()) <= kMaxDims;
  for (int64_t d : ns) ok = ok && d > 0;
  HEED_CHECK(ok, "LayerNorm", "normalized_shape must be 1 to ", kMaxDims,
             " positive sizes; got ", detail::py_tuple(ns));
  HEED_CHECK(options.eps() >= 0, "LayerNorm", "eps must be >= 0; got ", options.eps());
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", empty(Shape(ns)));
    bias = register_parameter("bias", empty(Shape(ns)));
  }
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (!options.elementwise_affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& x) {
  const Shape ns(options.normalized_shape());
  const int k = ns.size(), r = x.dim();
  bool match = r >= k;
  for (int i = 0; match && i < k; ++i) match = x.shape()[r - k + i] == ns[i];
  HEED_CHECK(match, "LayerNorm", "input ", x.shape(), " does not end in normalized_shape ",
             detail::py_tuple(options.normalized_shape()));
  return layer_norm(x, ns, weight, bias, options.eps());
}

std::string LayerNormImpl::repr() const {
  return "LayerNorm(" + detail::py_tuple(options.normalized_shape()) +
         ", eps=" + detail::py_float(options.eps()) +
         ", elementwise_affine=" + detail::py_bool(options.elementwise_affine()) + ")";
}

}  // namespace heed::nn
