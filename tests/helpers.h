// helpers.h - small utilities shared by the tests.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <heed/heed.h>

namespace heed::test {

// A leaf tensor of normal values that requires grad.
inline Tensor param(const Shape& s, double scale = 1.0) {
  Tensor t = randn(s);
  t.mul_(real(scale));
  return t.requires_grad_();
}

// Largest |a - b| / (atol + rtol*|b|) over elements; <= 1 means "close".
inline bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-6) {
  if (a.shape() != b.shape()) return false;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data()[i], y = b.data()[i];
    if (std::isnan(x) != std::isnan(y)) return false;
    if (std::isinf(y) && x == y) continue;
    if (std::fabs(x - y) > atol + rtol * std::fabs(y)) return false;
  }
  return true;
}

// Runs gradcheck and reports the first disagreement through doctest.
inline void check_grad(const TensorFn& f, const std::vector<Tensor>& inputs,
                       const GradcheckOptions& opt = GradcheckOptions()) {
  GradcheckResult r = gradcheck(f, inputs, opt);
  CHECK_MESSAGE(r.ok, r.message);
}

}  // namespace heed::test
