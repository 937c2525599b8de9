// layer_norm.cpp - fused layer norm: the forward and backward kernels over plain pointers,
// the recorded op, and the composed twin.
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
#include "layer_norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "../../core/elementwise.h"
#include "../../core/error.h"
#include "../../core/parallel.h"
#include "../engine/composed_backward.h"
#include "../engine/node.h"
#include "arith.h"
#include "reduce.h"
#include "unary.h"

namespace heed {

// ---------------------------------------------------------------- the kernels

void layer_norm_forward(const LayerNormArgs& a) {
  const int64_t N = a.N, D = a.D;
  const real *x = a.x, *w = a.w, *b = a.b;
  real *y = a.y, *mean = a.mean, *rstd = a.rstd;
  const double eps = a.eps;
  parallel_for(N, kGrainElementwise / (D + 1) + 1, [&](int64_t s, int64_t e) {
    for (int64_t n = s; n < e; ++n) {
      const real* row = x + n * D;  // (D)
      real* out = y + n * D;        // (D)
      const real m = real(row_sum(row, D) / double(D));  // 1.
      const double sq = row_accumulate(D, [&](int64_t j) {
        const real d = row[j] - m;
        return d * d;
      });
      const real rs = real(1 / std::sqrt(sq / double(D) + eps));  // 2.
      mean[n] = m;
      rstd[n] = rs;
      for (int64_t j = 0; j < D; ++j) out[j] = (row[j] - m) * rs;  // 3.
      if (w)  // 4.
        for (int64_t j = 0; j < D; ++j) out[j] *= w[j];
      if (b)
        for (int64_t j = 0; j < D; ++j) out[j] += b[j];
    }
  });
}

void layer_norm_backward(const LayerNormArgs& a, const LayerNormGrads& g) {
  const int64_t N = a.N, D = a.D;
  const real *x = a.x, *w = a.w, *mean = a.mean, *rstd = a.rstd, *dy = g.dy;
  real *dx = g.dx, *dw = g.dw, *db = g.db;
  // One pass over the rows, in pieces of kPieceRows rows: a piece writes its rows of dx and
  // adds its rows into its own column partials of dw and db (in `real`, one (2, D) slice of
  // `part` per piece). The partials are then added in double, piece by piece, so the
  // result does not depend on how pieces were shared among threads.
  constexpr int64_t kPieceRows = 64;
  const int64_t pieces = (N + kPieceRows - 1) / kPieceRows;
  const bool need_wb = dw || db;
  const Tensor part = need_wb ? zeros({pieces, 2, D}) : Tensor();  // (pieces, 2, D), cached
  parallel_for(pieces, kGrainElementwise / (kPieceRows * D + 1) + 1, [&](int64_t s, int64_t e) {
    for (int64_t p = s; p < e; ++p)
      for (int64_t n = p * kPieceRows; n < std::min(N, (p + 1) * kPieceRows); ++n) {
        const real *xr = x + n * D, *dyr = dy + n * D, m = mean[n], rs = rstd[n];  // (D) rows
        if (need_wb) {  // 4. dw[j] += dy * xhat,  db[j] += dy
          real *sw = data_or_null(part) + p * 2 * D, *sb = sw + D;
          for (int64_t j = 0; j < D; ++j) sw[j] += dyr[j] * ((xr[j] - m) * rs);
          for (int64_t j = 0; j < D; ++j) sb[j] += dyr[j];
        }
        if (dx) {  // 3+2+1.
          real* dxr = dx + n * D;  // holds dxhat until the last loop
          for (int64_t j = 0; j < D; ++j) dxr[j] = w ? dyr[j] * w[j] : dyr[j];
          const real a = real(row_sum(dxr, D) / double(D));
          const real c = real(row_accumulate(D, [&](int64_t j) {
                                return dxr[j] * ((xr[j] - m) * rs);
                              }) / double(D));
          for (int64_t j = 0; j < D; ++j) dxr[j] = rs * (dxr[j] - a - ((xr[j] - m) * rs) * c);
        }
      }
  });
  if (!need_wb) return;
  // dw += the pieces' partials, column by column, in double
  constexpr int64_t chunk = 256;
  parallel_for((D + chunk - 1) / chunk, kGrainElementwise / (pieces * chunk + 1) + 1,
               [&](int64_t s, int64_t e) {
    for (int64_t c = s; c < e; ++c) {
      const int64_t j0 = c * chunk, len = std::min(D, j0 + chunk) - j0;
      double sw[chunk] = {}, sb[chunk] = {};
      for (int64_t p = 0; p < pieces; ++p) {
        const real* pw = data_or_null(part) + p * 2 * D + j0;
        for (int64_t j = 0; j < len; ++j) sw[j] += pw[j], sb[j] += pw[D + j];
      }
      for (int64_t j = 0; j < len; ++j) {
        if (dw) dw[j0 + j] += real(sw[j]);
        if (db) db[j0 + j] += real(sb[j]);
      }
    }
  });
}

// ---------------------------------------------------------------- the op

namespace {

// heed::Error naming `op` unless x ends in normalized_shape and w, b (if given) have it.
void check_shapes(const char* op, const Tensor& x, const Shape& normalized_shape,
                  const Tensor& weight, const Tensor& bias) {
  const int k = normalized_shape.size(), r = x.dim();
  bool match = k >= 1 && r >= k;
  for (int i = 0; match && i < k; ++i) match = x.shape()[r - k + i] == normalized_shape[i];
  HEED_CHECK(match, op, "input ", x.shape(), " does not end in normalized_shape ",
             normalized_shape);
  HEED_CHECK(!weight.defined() || weight.shape() == normalized_shape, op, "weight ",
             weight.shape(), " does not match normalized_shape ", normalized_shape);
  HEED_CHECK(!bias.defined() || bias.shape() == normalized_shape, op, "bias ", bias.shape(),
             " does not match normalized_shape ", normalized_shape);
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  check_shapes("layer_norm", x, normalized_shape, weight, bias);
  const int64_t D = normalized_shape.numel(), N = D > 0 ? x.numel() / D : 0;
  Tensor y = empty(x.shape());                          // (N, D)
  Tensor mu = empty(Shape{N}), rstd = empty(Shape{N});  // (N)
  LayerNormArgs a;
  a.N = N, a.D = D, a.x = x.data(), a.w = data_or_null(weight), a.b = data_or_null(bias);
  a.eps = eps, a.y = y.data(), a.mean = mu.data(), a.rstd = rstd.data();
  layer_norm_forward(a);
  return record("layer_norm", y, {x, weight, bias}, kDoubleBackward,
                [x = SavedTensor(x), weight = SavedTensor(weight), mu, rstd, a,
                 ns = normalized_shape](const Tensor& dy, Grads& g) {
    if (g.create_graph()) {  // the composed twin (composed_backward.h); db depends on dy
      const Tensor bias = g.needs(2) ? zeros(ns).requires_grad_() : Tensor();  // alone: a stand-in
      return detail::composed_gradients([&](const std::vector<Tensor>& in) {
        return layer_norm_reference(in[0], ns, in[1], in[2], a.eps);
      }, {x, weight, bias}, dy, g);
    }
    const Tensor dx = g.needs(0) ? empty(x.shape()) : Tensor(),  // written, not accumulated
                 dw = g.needs(1) ? zeros(ns) : Tensor(), db = g.needs(2) ? zeros(ns) : Tensor();
    LayerNormArgs fwd = a;  // x, w, mean and rstd, read again from what the closure holds
    fwd.x = x.data(), fwd.w = data_or_null(weight), fwd.b = fwd.y = nullptr;
    fwd.mean = mu.data(), fwd.rstd = rstd.data();
    layer_norm_backward(fwd, {dy.data(), data_or_null(dx), data_or_null(dw), data_or_null(db)});
    const Tensor grads[] = {dx, dw, db};
    for (int i = 0; i < 3; ++i)
      if (g.needs(i)) g[i] = grads[i];
  });
}

// ---------------------------------------------------------------- the composed twin

//   mu = mean(x), var = var(x, biased), y = (x - mu) / sqrt(var + eps) * w + b
Tensor layer_norm_reference(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                            const Tensor& bias, double eps) {
  check_shapes("layer_norm_reference", x, normalized_shape, weight, bias);
  Shape rows;  // (..., D): the normalized dims folded into one
  for (int i = 0; i < x.dim() - normalized_shape.size(); ++i) rows.push_back(x.size(i));
  rows.push_back(normalized_shape.numel());
  const Tensor xf = x.reshape(rows);                                          // (..., D)
  const Tensor mu = mean(xf, -1, true);                                       // (..., 1)
  const Tensor var_ = var(xf, -1, /*unbiased=*/false, /*keepdim=*/true);      // (..., 1)
  Tensor y = ((xf - mu) / sqrt(var_ + real(eps))).reshape(x.shape());
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

}  // namespace heed
