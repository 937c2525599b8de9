// gelu.h - GELU (Hendrycks and Gimpel 2016, "Gaussian Error Linear Units") one value at a
// time, in both of PyTorch's forms, each also with its derivative. The gelu op
// (autograd/unary.cpp) and the GEMM epilogue (core/gemm_epilogue.h) both call these, so the
// fused Linear + GELU and the composed one give the same bits.
//
//   erf form    y = x Phi(x)                           y' = Phi(x) + x phi(x)
//   tanh form   y = x (1 + tanh u) / 2,  u = sqrt(2/pi) (x + 0.044715 x^3)
//               y' = s + 2 x s (1 - s) u',  s = sigmoid(2u),  u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2)
//
// Phi(x) = (1 + erf(x / sqrt 2)) / 2, phi(x) = e^(-x^2/2) / sqrt(2 pi): fastmath::normal_cdf keeps
// the tiny values of Phi at very negative x that 1 + erf rounds to 0, and gives phi from the
// same exp. The tanh form is computed as (1 + tanh u) / 2 = sigmoid(2u) = s and (1 - t^2) / 4 =
// s (1 - s), the same function without the cancellation of 1 + t at negative x (at x = -3,
// 1 + t keeps only 4 of float's 7 digits). With e = e^(-2|u|) and r = 1 / (1 + e): s = r for
// u >= 0, e r for u < 0, and s (1 - s) = e r^2 either way.
#pragma once
#include <cmath>

#include "fastmath.h"
#include "real.h"

namespace heed::gelu_math {

constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kCubic = 0.044715;

inline real erf_form(real v) { return v * fastmath::normal_cdf(v); }

inline real erf_form(real v, real& d) {  // also d = y'(v)
  real pdf;
  const real cdf = fastmath::normal_cdf(v, &pdf);
  d = cdf + v * pdf;
  return v * cdf;
}

inline real tanh_form(real v) {
  const real u = real(kSqrt2OverPi) * (v + real(kCubic) * v * v * v);
  return v * fastmath::sigmoid(2 * u);
}

inline real tanh_form(real v, real& d) {  // also d = y'(v)
  const real u = real(kSqrt2OverPi) * (v + real(kCubic) * v * v * v);
  const real du = real(kSqrt2OverPi) * (1 + 3 * real(kCubic) * v * v);
  const real e = fastmath::exp(-2 * std::abs(u)), r = 1 / (1 + e), er = e * r;
  const real s = u >= 0 ? r : er;
  d = s + 2 * v * (er * r) * du;
  return tanh_form(v);
}

}  // namespace heed::gelu_math
