// clip.cpp - clip_grad_norm_ and clip_grad_value_ (the formulas: clip.h).
#include "clip.h"

#include <algorithm>
#include <cmath>

#include "../core/error.h"
#include "../core/parallel.h"

namespace heed::optim {

namespace {

// max(a, b), NaN if either is (as torch.max propagates NaN).
double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }

// sum |x|^p over a gradient, or max |x| when p is infinite (NaN wins, as in torch.max).
// Summed in double in fixed blocks, so the result does not depend on the thread count.
double norm_part(const Tensor& g, double p) {
  constexpr int64_t kBlock = 1 << 14;
  const real* x = g.data();
  const int64_t n = g.numel(), blocks = (n + kBlock - 1) / kBlock;
  const bool inf = std::isinf(p);
  std::vector<double> part(blocks, 0.0);
  parallel_for(blocks, 4, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      double acc = 0;
      for (int64_t i = b * kBlock, e = std::min(n, i + kBlock); i < e; ++i) {
        const double a = std::fabs(double(x[i]));
        if (inf) acc = nan_max(acc, a);
        else acc += p == 2 ? a * a : p == 1 ? a : std::pow(a, p);
      }
      part[b] = acc;
    }
  });
  double total = 0;
  for (double v : part) total = inf ? nan_max(total, v) : total + v;
  return total;
}

}  // namespace

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  HEED_CHECK(norm_type > 0, "clip_grad_norm_", "norm_type ", norm_type,
             " is not > 0 (use 2, 1, or infinity)");
  HEED_CHECK(max_norm >= 0, "clip_grad_norm_", "max_norm ", max_norm, " is negative");
  const bool inf = std::isinf(norm_type);
  double total = 0;
  for (const Tensor& p : params) {
    const Tensor g = p.defined() ? p.grad() : Tensor();  // undefined: an absent parameter
    if (!g.defined()) continue;
    const double part = norm_part(g, norm_type);
    total = inf ? nan_max(total, part) : total + part;
  }
  if (!inf) total = std::pow(total, 1 / norm_type);
  HEED_CHECK(!error_if_nonfinite || std::isfinite(total), "clip_grad_norm_", "the total norm of order ",
             norm_type, " of the gradients is ", total, "; the gradients were left as they are");

  const double coef = max_norm / (total + 1e-6);
  if (!(coef >= 1)) {  // below 1, or NaN (PyTorch's clamp(coef, max=1) keeps a NaN)
    const real c = real(coef);
    for (const Tensor& p : params) {
      const Tensor g = p.defined() ? p.grad() : Tensor();  // undefined: an absent parameter
      if (!g.defined()) continue;
      g.bump_version();  // written in place below
      real* x = g.data();
      parallel_for(g.numel(), kGrainElementwise, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) x[i] *= c;
      });
    }
  }
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
  HEED_CHECK(clip_value >= 0, "clip_grad_value_", "clip_value ", clip_value, " is negative");
  const real hi = real(clip_value), lo = -hi;
  for (const Tensor& p : params) {
    const Tensor g = p.defined() ? p.grad() : Tensor();  // undefined: an absent parameter
    if (!g.defined()) continue;
    g.bump_version();  // written in place below
    real* x = g.data();
    parallel_for(g.numel(), kGrainElementwise, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) x[i] = std::min(std::max(x[i], lo), hi);  // NaN stays NaN
    });
  }
}

}  // namespace heed::optim
