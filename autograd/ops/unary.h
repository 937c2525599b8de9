// unary.h - elementwise functions of one tensor: exp log log1p sqrt tanh sigmoid relu gelu
// elu leaky_relu softplus mish prelu abs clamp. Defaults follow PyTorch (gelu is the exact erf form,
// elu alpha = 1, leaky_relu slope = 0.01, softplus beta = 1 and threshold = 20).
// Each op's derivative is written beside it in unary.cpp.
#pragma once
#include <limits>
#include <string>

#include "../../core/tensor.h"

namespace heed {

Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
// log(1 + x), accurate for tiny |x| (where 1 + x rounds away x's low digits).
Tensor log1p(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
// approximate: "none" (x * Phi(x), PyTorch's default) or "tanh".
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor elu(const Tensor& x, real alpha = 1);
// x > 0 ? x : negative_slope * x (the slope may be any number, as PyTorch's)
Tensor leaky_relu(const Tensor& x, real negative_slope = real(0.01));
// log(1 + e^(beta x)) / beta, and x itself where beta x > threshold (PyTorch's rule): never
// overflows, as log1p(exp(x)) composed does at x > 88 in float. beta must be finite and nonzero.
Tensor softplus(const Tensor& x, real beta = 1, real threshold = 20);
// x * tanh(softplus(x)) (Mish, Misra 2019; PyTorch's F.mish)
Tensor mish(const Tensor& x);
// x > 0 ? x : w x, weight (1) or (C) slopes along dim 1 of x (PyTorch's F.prelu)
Tensor prelu(const Tensor& x, const Tensor& weight);
Tensor abs(const Tensor& x);
// clamp to [lo, hi]; pass -inf / +inf for a one-sided clamp (or use clamp_min/clamp_max).
Tensor clamp(const Tensor& x, real lo, real hi);
Tensor clamp_min(const Tensor& x, real lo);
Tensor clamp_max(const Tensor& x, real hi);

}  // namespace heed
