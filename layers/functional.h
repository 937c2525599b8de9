// functional.h - heed::nn::functional, as torch::nn::functional: every op heed has that
// libtorch also offers there, with libtorch's option structs where libtorch takes one.
//   namespace F = heed::nn::functional;
//   Tensor h = F::relu(x);                                              // x (B, C)
//   Tensor lp = F::log_softmax(logits, F::LogSoftmaxFuncOptions(1));    // (B, V)
//   Tensor d = F::dropout(h, F::DropoutFuncOptions().p(0.1).training(is_training()));
// Each is one call to the op in autograd/ops/ that holds the forward, the backward and the
// equations; bad input is that op's heed::Error. The losses (loss.h) and
// F::normalize (autograd/ops/normalize.h) come with this include.
//
//   F::relu(x, ReLUFuncOptions)               F::gelu(x, GELUFuncOptions)
//   F::elu(x, ELUFuncOptions)                 F::softmax(x, SoftmaxFuncOptions(dim))
//   F::leaky_relu(x, LeakyReLUFuncOptions)    F::softplus(x, SoftplusFuncOptions)
//   F::mish(x)                                F::prelu(x, weight)
//   F::log_softmax(x, LogSoftmaxFuncOptions(dim))
//   F::dropout(x, DropoutFuncOptions)         F::embedding(ids, weight, EmbeddingFuncOptions)
//   F::linear(x, weight, bias)                F::layer_norm(x, LayerNormFuncOptions(shape))
//   F::normalize(x, NormalizeFuncOptions)     F::cross_entropy, nll_loss, mse_loss,
//   binary_cross_entropy_with_logits, smooth_l1_loss, huber_loss (loss.h)
//
// inplace(true), where libtorch has it, writes the result into x's storage and returns x;
// it is refused (heed::Error from copy_) when x is part of a graph being recorded, where
// heed records out of place: write x = F::relu(x).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "../autograd/ops/dropout.h"
#include "../autograd/ops/embedding.h"
#include "../autograd/ops/layer_norm.h"
#include "../autograd/ops/linear.h"
#include "../autograd/ops/normalize.h"
#include "../autograd/ops/softmax.h"
#include "../autograd/ops/unary.h"
#include "../core/arg.h"
#include "activation.h"
#include "loss.h"

namespace heed::nn::functional {

namespace detail {
inline Tensor maybe_inplace(Tensor x, const Tensor& y, bool inplace) {
  return inplace ? x.copy_(y) : y;
}
}  // namespace detail

class ReLUFuncOptions {
 public:
  ReLUFuncOptions(bool inplace = false) : inplace_(inplace) {}  // implicit, as libtorch's
  HEED_ARG(bool, inplace);
};
inline Tensor relu(Tensor x, const ReLUFuncOptions& o = {}) {
  return detail::maybe_inplace(x, heed::relu(x), o.inplace());
}

using GELUFuncOptions = nn::GELUOptions;  // approximate: "none" or "tanh"
inline Tensor gelu(const Tensor& x, const GELUFuncOptions& o = {}) { return heed::gelu(x, o.approximate()); }

class ELUFuncOptions {
 public:
  HEED_ARG(double, alpha) = 1.0;
  HEED_ARG(bool, inplace) = false;
};
inline Tensor elu(Tensor x, const ELUFuncOptions& o = {}) {
  return detail::maybe_inplace(x, heed::elu(x, real(o.alpha())), o.inplace());
}

class LeakyReLUFuncOptions {
 public:
  HEED_ARG(double, negative_slope) = 0.01;
  HEED_ARG(bool, inplace) = false;
};
inline Tensor leaky_relu(Tensor x, const LeakyReLUFuncOptions& o = {}) {
  return detail::maybe_inplace(x, heed::leaky_relu(x, real(o.negative_slope())), o.inplace());
}

// libtorch's SoftplusFuncOptions is its SoftplusOptions (no inplace), and so is heed's.
using SoftplusFuncOptions = SoftplusOptions;
inline Tensor softplus(const Tensor& x, const SoftplusFuncOptions& o = {}) {
  return heed::softplus(x, real(o.beta()), real(o.threshold()));
}

// libtorch's F::mish takes no options.
inline Tensor mish(const Tensor& x) { return heed::mish(x); }
// weight: (1) or (C), the slopes along dim 1 of x, as libtorch's F::prelu(input, weight)
inline Tensor prelu(const Tensor& x, const Tensor& weight) { return heed::prelu(x, weight); }

// The dim is required, as libtorch's; F::softmax(x, 1) also reads (the constructor is implicit).
class SoftmaxFuncOptions {
 public:
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}
  HEED_ARG(int64_t, dim);
};
class LogSoftmaxFuncOptions {
 public:
  LogSoftmaxFuncOptions(int64_t dim) : dim_(dim) {}
  HEED_ARG(int64_t, dim);
};
inline Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& o) { return heed::softmax(x, o.dim()); }
inline Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& o) {
  return heed::log_softmax(x, o.dim());
}

// training defaults to true, as libtorch's (a module passes is_training()).
class DropoutFuncOptions {
 public:
  HEED_ARG(double, p) = 0.5;
  HEED_ARG(bool, training) = true;
  HEED_ARG(bool, inplace) = false;
};
inline Tensor dropout(Tensor x, const DropoutFuncOptions& o = {}) {
  return detail::maybe_inplace(x, heed::dropout(x, o.p(), o.training()), o.inplace());
}

class EmbeddingFuncOptions {
 public:
  HEED_ARG(std::optional<int64_t>, padding_idx);
};
inline Tensor embedding(const IndexTensor& ids, const Tensor& weight, const EmbeddingFuncOptions& o = {}) {
  return heed::embedding(ids, weight, o.padding_idx());
}

inline Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {}) {
  return heed::linear(x, weight, bias);
}

class LayerNormFuncOptions {
 public:
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}
  HEED_ARG(std::vector<int64_t>, normalized_shape);
  HEED_ARG(Tensor, weight);
  HEED_ARG(Tensor, bias);
  HEED_ARG(double, eps) = 1e-5;
};
inline Tensor layer_norm(const Tensor& x, const LayerNormFuncOptions& o) {
  return heed::layer_norm(x, Shape(o.normalized_shape()), o.weight(), o.bias(), o.eps());
}

class NormalizeFuncOptions {
 public:
  HEED_ARG(double, p) = 2.0;
  HEED_ARG(int64_t, dim) = 1;
  HEED_ARG(double, eps) = 1e-12;
};
inline Tensor normalize(const Tensor& x, const NormalizeFuncOptions& o) {
  return heed::normalize(x, o.p(), o.dim(), o.eps());
}

}  // namespace heed::nn::functional
