// normalize.cpp - y = x / max(||x||_p, eps) along one dim: forward, derivative, backward.
//
// x is seen as (outer, n, inner) (reduce_util.h); each (o, i) is one row x[o, :, i]. With
// r = ||x||_p of the row and d = max(r, eps):
//   y_k  = x_k / d
//   dx_k = dy_k / d - (sum_j dy_j x_j) / d^2 * dd/dx_k
//   dd/dx_k = sign(x_k) |x_k|^(p-1) / r^(p-1)   where r >= eps (x_k / r for p = 2)
//           = 0                                  where r < eps (d is the constant eps)
// (r == eps passes the gradient, as clamp_min's does; a NaN in a row makes the row's output
// and gradient NaN.) Norms and sums are taken in double.
#include "normalize.h"

#include <cmath>
#include <vector>

#include "../../core/error.h"
#include "../../core/parallel.h"
#include "../../core/shape.h"
#include "../engine/composed_backward.h"
#include "../engine/node.h"
#include "arith.h"
#include "norm.h"
#include "reduce.h"
#include "reduce_util.h"
#include "unary.h"

namespace heed {

namespace {

void check_args(const char* op, double p, double eps) {
  if (!(p >= 1) || !std::isfinite(p))
    fail(op, "p must be finite and >= 1, got ", p);
  if (!(eps >= 0)) fail(op, "eps must be >= 0, got ", eps);
}

// ||row||_p of x[o, :, i].
double row_norm(const real* x, int64_t n, int64_t inner, double p) {
  double s = 0;
  if (p == 2) {
    for (int64_t k = 0; k < n; ++k) s += double(x[k * inner]) * x[k * inner];
    return std::sqrt(s);
  }
  for (int64_t k = 0; k < n; ++k) s += std::pow(std::fabs(double(x[k * inner])), p);
  return std::pow(s, 1 / p);
}

}  // namespace

Tensor normalize(const Tensor& x, double p, int64_t dim, double eps) {
  check_args("normalize", p, eps);
  const int d = wrap_dim("normalize", dim, x.dim());
  const detail::Split sp = detail::split_at(x.shape(), d);
  const int64_t rows = sp.outer * sp.inner;
  Tensor y = empty(x.shape());
  Tensor norms = empty(Shape{rows});  // r of each row (o, i), at o * inner + i
  const real* xp = x.data();
  real* yp = y.data();
  real* rp = norms.data();
  parallel_for(rows, kGrainElementwise / (sp.n + 1) + 1, [&](int64_t b, int64_t e) {
    for (int64_t w = b; w < e; ++w) {
      const int64_t o = w / sp.inner, i = w % sp.inner, base = o * sp.n * sp.inner + i;
      const double r = row_norm(xp + base, sp.n, sp.inner, p);
      const double denom = r < eps ? eps : r;  // NaN stays NaN
      rp[w] = real(r);
      for (int64_t k = 0; k < sp.n; ++k) yp[base + k * sp.inner] = real(xp[base + k * sp.inner] / denom);
    }
  });
  return record("normalize", y, {x}, kDoubleBackward, [x = SavedTensor(x), norms, sp, p, eps](const Tensor& dy, Grads& g) {
    // Under create_graph: the composed twin over x seen as (outer, n, inner)
    // (composed_backward.h); at a zero row both give dy / eps.
    if (g.create_graph())
      return detail::composed_gradients([&](const std::vector<Tensor>& in) {
        return normalize_reference(in[0].reshape({sp.outer, sp.n, sp.inner}), p, 1, eps).reshape(in[0].shape());
      }, {x}, dy, g);
    Tensor dx = empty(x.shape());
    const real *xp = x.data(), *gp = dy.data(), *rp = norms.data();
    real* dp = dx.data();
    parallel_for(sp.outer * sp.inner, kGrainElementwise / (sp.n + 1) + 1, [&](int64_t b, int64_t e) {
      for (int64_t w = b; w < e; ++w) {
        const int64_t o = w / sp.inner, i = w % sp.inner, base = o * sp.n * sp.inner + i;
        const double r = rp[w];
        const bool clamped = r < eps;  // d = eps, a constant
        const double denom = clamped ? eps : r;
        double dot = 0;  // sum_j dy_j x_j
        for (int64_t k = 0; k < sp.n; ++k) dot += double(gp[base + k * sp.inner]) * xp[base + k * sp.inner];
        const double c = clamped ? 0 : dot / (denom * denom) / std::pow(r, p - 1);
        for (int64_t k = 0; k < sp.n; ++k) {
          const double xk = xp[base + k * sp.inner];
          const double dd = p == 2 ? xk : (xk < 0 ? -1 : xk > 0 ? 1 : 0) * std::pow(std::fabs(xk), p - 1);
          dp[base + k * sp.inner] = real(gp[base + k * sp.inner] / denom - c * dd);
        }
      }
    });
    g[0] = dx;
  });
}

Tensor normalize_reference(const Tensor& x, double p, int64_t dim, double eps) {
  check_args("normalize_reference", p, eps);
  const Tensor r = norm(x, p, dim, /*keepdim=*/true);  // its gradient at a zero row is 0, not NaN
  return x / clamp_min(r, real(eps));
}

}  // namespace heed
