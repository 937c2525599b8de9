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

#include "../core/elementwise.h"
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
      real* out = py + n * D;
      const real m = real(row_sum(row, D) / double(D));  // 1.
      const double sq = row_accumulate(D, [&](int64_t j) {
        const real d = row[j] - m;
        return d * d;
      });
      const real rs = real(1 / std::sqrt(sq / double(D) + eps));  // 2.
      pmu[n] = m;
      prs[n] = rs;
      for (int64_t j = 0; j < D; ++j) out[j] = (row[j] - m) * rs;  // 3.
      if (pw)  // 4.
        for (int64_t j = 0; j < D; ++j) out[j] *= pw[j];
      if (pb)
        for (int64_t j = 0; j < D; ++j) out[j] += pb[j];
    }
  });

  return record("layer_norm", y, {x, weight, bias}, [x, weight, mu, rstd, N, D,
                                                 ns = normalized_shape](const Tensor& dy, Grads& g) {
    const real *px = x.data(), *pdy = dy.data(), *pmu = mu.data(), *prs = rstd.data();
    const real* pw = weight.defined() ? weight.data() : nullptr;
    const bool need_dx = g.needs(0), need_wb = g.needs(1) || g.needs(2);
    // One pass over the rows, in pieces of kPieceRows rows: a piece writes its rows of dx and
    // adds its rows into its own column partials of dw and db (in `real`, one (2, D) slice of
    // `part` per piece). The partials are then added in double, piece by piece, so the
    // result does not depend on how pieces were shared among threads.
    constexpr int64_t kPieceRows = 64;
    const int64_t pieces = (N + kPieceRows - 1) / kPieceRows;
    Tensor part = need_wb ? zeros({pieces, 2, D}) : Tensor();
    if (need_dx) g[0] = empty(x.shape());
    real* pdx = need_dx ? g[0].data() : nullptr;
    real* ppart = need_wb ? part.data() : nullptr;
    parallel_for(pieces, kGrainElementwise / (kPieceRows * D + 1) + 1, [&](int64_t s, int64_t e) {
      for (int64_t p = s; p < e; ++p)
        for (int64_t n = p * kPieceRows; n < std::min(N, (p + 1) * kPieceRows); ++n) {
          const real *xr = px + n * D, *dyr = pdy + n * D, m = pmu[n], rs = prs[n];
          if (need_wb) {  // 4. dw[j] += dy * xhat,  db[j] += dy
            real *sw = ppart + p * 2 * D, *sb = sw + D;
            for (int64_t j = 0; j < D; ++j) sw[j] += dyr[j] * ((xr[j] - m) * rs);
            for (int64_t j = 0; j < D; ++j) sb[j] += dyr[j];
          }
          if (need_dx) {  // 3+2+1.
            real* dx = pdx + n * D;  // holds dxhat until the last loop
            for (int64_t j = 0; j < D; ++j) dx[j] = pw ? dyr[j] * pw[j] : dyr[j];
            const real a = real(row_sum(dx, D) / double(D));
            const real c = real(row_accumulate(D, [&](int64_t j) {
                                  return dx[j] * ((xr[j] - m) * rs);
                                }) / double(D));
            for (int64_t j = 0; j < D; ++j) dx[j] = rs * (dx[j] - a - ((xr[j] - m) * rs) * c);
          }
        }
    });
    if (need_wb) {  // dw = sum of the pieces' partials, column by column, in double
      Tensor dw = empty(ns), db = empty(ns);
      real *pdw = dw.data(), *pdb = db.data();
      constexpr int64_t chunk = 256;
      parallel_for((D + chunk - 1) / chunk, kGrainElementwise / (pieces * chunk + 1) + 1,
                   [&](int64_t s, int64_t e) {
        for (int64_t c = s; c < e; ++c) {
          const int64_t j0 = c * chunk, len = std::min(D, j0 + chunk) - j0;
          double sw[chunk] = {}, sb[chunk] = {};
          for (int64_t p = 0; p < pieces; ++p) {
            const real* w = ppart + p * 2 * D + j0;
            for (int64_t j = 0; j < len; ++j) sw[j] += w[j], sb[j] += w[D + j];
          }
          for (int64_t j = 0; j < len; ++j) pdw[j0 + j] = real(sw[j]), pdb[j0 + j] = real(sb[j]);
        }
      });
      if (g.needs(1)) g[1] = dw;
      if (g.needs(2)) g[2] = db;
    }
  });
}

}  // namespace heed
