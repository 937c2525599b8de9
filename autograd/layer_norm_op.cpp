// layer_norm_op.cpp - fused layer norm: one pass per row forward, one backward.
//
// x is seen as (N, D): D = prod(normalized_shape), N = every leading dim folded.
//
//   forward  (per row n)
//     1. mu[n]   = sum_j x[n, j] / D
//     2. rstd[n] = 1 / sqrt(sum_j (x[n, j] - mu[n])^2 / D + eps)
//     3. xhat    = (x - mu[n]) * rstd[n]
//     4. y       = xhat * w + b
//   saved: x, w, mu (N), rstd (N)          xhat is recomputed from them in backward
//
//   backward, undoing the forward steps in reverse:
//     4. dw[j] = sum_n dy[n, j] * xhat[n, j]     db[j] = sum_n dy[n, j]
//        dxhat = dy * w                          (dy itself when there is no w)
//     3+2+1. xhat depends on x directly and through mu and rstd; with
//        a = mean_j(dxhat[n, j]) and c = mean_j(dxhat[n, j] * xhat[n, j]),
//        dx[n, j] = rstd[n] * (dxhat[n, j] - a - xhat[n, j] * c)
#include "layer_norm_op.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "../core/error.h"
#include "../core/parallel.h"
#include "node.h"

namespace heed {

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  const int k = normalized_shape.size(), r = x.dim();
  bool match = k >= 1 && r >= k;
  for (int i = 0; match && i < k; ++i) match = x.shape()[r - k + i] == normalized_shape[i];
  HEED_CHECK(match, "layer_norm", "input ", x.shape(), " does not end in normalized_shape ",
             normalized_shape);
  HEED_CHECK(!weight.defined() || weight.shape() == normalized_shape, "layer_norm", "weight ",
             weight.shape(), " does not match normalized_shape ", normalized_shape);
  HEED_CHECK(!bias.defined() || bias.shape() == normalized_shape, "layer_norm", "bias ",
             bias.shape(), " does not match normalized_shape ", normalized_shape);
  const int64_t D = normalized_shape.numel(), N = D > 0 ? x.numel() / D : 0;

  Tensor y = empty(x.shape());  // (N, D)
  Tensor mu = empty(Shape{N}), rstd = empty(Shape{N});
  const real *px = x.data(), *pw = weight.defined() ? weight.data() : nullptr,
             *pb = bias.defined() ? bias.data() : nullptr;
  real *py = y.data(), *pmu = mu.data(), *prs = rstd.data();
  parallel_for(N, kGrainElementwise / (D + 1) + 1, [&](int64_t s, int64_t e) {
    for (int64_t n = s; n < e; ++n) {
      const real* row = px + n * D;
      double sum = 0, sq = 0;
      for (int64_t j = 0; j < D; ++j) sum += row[j];  // 1.
      const double m = sum / double(D);
      for (int64_t j = 0; j < D; ++j) sq += (row[j] - m) * (row[j] - m);
      const double rs = 1 / std::sqrt(sq / double(D) + eps);  // 2.
      pmu[n] = real(m);
      prs[n] = real(rs);
      for (int64_t j = 0; j < D; ++j) {
        const real xhat = real((row[j] - m) * rs);  // 3.
        py[n * D + j] = xhat * (pw ? pw[j] : 1) + (pb ? pb[j] : 0);  // 4.
      }
    }
  });

  return record("layer_norm", y, {x, weight, bias}, [x, weight, mu, rstd, N, D,
                                                 ns = normalized_shape](const Tensor& dy, Grads& g) {
    const real *px = x.data(), *pdy = dy.data(), *pmu = mu.data(), *prs = rstd.data();
    const real* pw = weight.defined() ? weight.data() : nullptr;
    auto xhat = [&](int64_t n, int64_t j) { return (px[n * D + j] - pmu[n]) * prs[n]; };
    if (g.needs(0)) {  // steps 3+2+1 per row
      g[0] = empty(x.shape());
      real* pdx = g[0].data();
      parallel_for(N, kGrainElementwise / (D + 1) + 1, [&](int64_t s, int64_t e) {
        for (int64_t n = s; n < e; ++n) {
          double a = 0, c = 0;
          for (int64_t j = 0; j < D; ++j) {
            const double dxhat = pdy[n * D + j] * (pw ? pw[j] : 1);
            a += dxhat;
            c += dxhat * xhat(n, j);
          }
          a /= double(D);
          c /= double(D);
          for (int64_t j = 0; j < D; ++j) {
            const double dxhat = pdy[n * D + j] * (pw ? pw[j] : 1);
            pdx[n * D + j] = real(prs[n] * (dxhat - a - xhat(n, j) * c));
          }
        }
      });
    }
    if (g.needs(1) || g.needs(2)) {  // step 4: column sums over rows; threads own columns
      Tensor dw = empty(ns), db = empty(ns);
      real *pdw = dw.data(), *pdb = db.data();
      constexpr int64_t chunk = 64;
      const int64_t chunks = (D + chunk - 1) / chunk;
      parallel_for(chunks, kGrainElementwise / (N * chunk + 1) + 1, [&](int64_t s, int64_t e) {
        for (int64_t c = s; c < e; ++c) {
          const int64_t j0 = c * chunk, j1 = std::min(D, j0 + chunk);
          double sw[chunk] = {}, sb[chunk] = {};
          for (int64_t n = 0; n < N; ++n)
            for (int64_t j = j0; j < j1; ++j) {
              sw[j - j0] += pdy[n * D + j] * xhat(n, j);
              sb[j - j0] += pdy[n * D + j];
            }
          for (int64_t j = j0; j < j1; ++j) {
            pdw[j] = real(sw[j - j0]);
            pdb[j] = real(sb[j - j0]);
          }
        }
      });
      if (g.needs(1)) g[1] = dw;
      if (g.needs(2)) g[2] = db;
    }
  });
}

}  // namespace heed
