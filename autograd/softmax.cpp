// softmax.cpp - softmax and log_softmax over one dim: raw forward and backward kernels,
// and the two ops that record them.
//
// x is seen as (outer, n, inner) (reduce_util.h): each (o, i) is one row x[o, :, i] of n
// elements, inner apart, normalised on its own. inner == 1 (the last dim: attention
// scores, logits) is the fast path: the rows are contiguous and each is one task of the
// parallel loop. Otherwise neighbouring rows are processed side by side (for_each_block).
//
// Fully masked rows (every x = -inf, the max m = -inf, so x - m would be NaN): softmax
// writes 0 and log_softmax -inf, and both backward kernels give them zero gradient.
// Positions that are -inf in a row with some finite entry get probability 0 as usual.
#include "softmax.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "../core/parallel.h"
#include "../core/shape.h"
#include "node.h"
#include "reduce_util.h"

namespace heed {

namespace {

using detail::Split;
using detail::split_at;

constexpr real kNegInf = -std::numeric_limits<real>::infinity();

constexpr int64_t kChunk = 256;  // rows per block on the strided path
using One = std::integral_constant<int64_t, 1>;

// Calls block(base, stride, len) for every block of rows, in parallel. A block is `len`
// neighbouring rows (o, i0), ..., (o, i0 + len - 1); element k of row i0 + j is at
// base + k * stride + j.
//   inner == 1  the fast path: one contiguous row per block, parallel over rows; stride
//               and len are the compile-time constant 1, so the kernels below compile
//               to plain loops over the row
//   inner > 1   up to kChunk rows side by side, stride = inner, so the innermost loop
//               (over j) reads contiguous memory however large the stride is
template <class BlockFn>
void for_each_block(const Split& sp, const BlockFn& block) {
  if (sp.outer * sp.inner == 0) return;  // no rows
  if (sp.inner == 1) {
    parallel_for(sp.outer, kGrainElementwise / (sp.n + 1) + 1, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) block(o * sp.n, One(), One());
    });
  } else {
    const int64_t width = sp.inner < kChunk ? sp.inner : kChunk;
    const int64_t chunks = (sp.inner + width - 1) / width;
    parallel_for(sp.outer * chunks, kGrainElementwise / (sp.n * width + 1) + 1,
                 [&](int64_t b, int64_t e) {
      for (int64_t w = b; w < e; ++w) {
        const int64_t o = w / chunks, i0 = (w % chunks) * width;
        const int64_t len = i0 + width < sp.inner ? width : sp.inner - i0;
        block((o * sp.n) * sp.inner + i0, sp.inner, len);
      }
    });
  }
}

// softmax:      y_k = exp(x_k - m) / s        m = max_j x_j,  s = sum_j exp(x_j - m)
// log_softmax:  y_k = (x_k - m) - log(s)
// Writes y; y, x: (outer, n, inner). A fully masked row (m = -inf) gets y = 0 (softmax)
// or y = -inf (log_softmax).
void softmax_forward(real* y, const real* x, const Split& sp, bool log) {
  const int64_t n = sp.n;
  for_each_block(sp, [&](int64_t base, auto stride, auto len) {
    const real* xb = x + base;
    real* yb = y + base;
    real m[kChunk];    // per row of the block: its max
    double s[kChunk];  // per row: sum_k exp(x_k - m)
    // 1. m = the row max; NaN if any element is NaN (so a NaN spreads to its whole row,
    //    as in PyTorch, instead of passing for "masked"), -inf if all are -inf
    for (int64_t j = 0; j < len; ++j) m[j] = kNegInf;
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < len; ++j) {
        const real v = xb[k * stride + j];
        if (v > m[j] || std::isnan(v)) m[j] = v;  // once m is NaN it stays NaN
      }
    // 2. s = sum_k exp(x_k - m); softmax keeps each exp in y on the way
    for (int64_t j = 0; j < len; ++j) s[j] = 0;
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < len; ++j) {
        const real e = std::exp(xb[k * stride + j] - m[j]);
        if (!log) yb[k * stride + j] = e;
        s[j] += e;
      }
    // 3. softmax: y_k = e_k / s;  log_softmax: y_k = (x_k - m) - log(s); masked rows: 0 / -inf
    bool masked[kChunk];
    real f[kChunk];  // 1 / s or log(s)
    for (int64_t j = 0; j < len; ++j) {
      masked[j] = m[j] == kNegInf;
      f[j] = log ? real(std::log(s[j])) : real(1 / s[j]);
    }
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < len; ++j) {
        real& yk = yb[k * stride + j];
        if (masked[j]) yk = log ? kNegInf : real(0);
        else yk = log ? (xb[k * stride + j] - m[j]) - f[j] : yk * f[j];
      }
  });
}

// softmax:      dx_k += y_k * (dy_k - sum_j dy_j y_j)
// log_softmax:  dx_k += dy_k - exp(y_k) * sum_j dy_j
// Accumulates into dx; dx, dy, y: (outer, n, inner), y the forward's output. A fully
// masked row gets nothing: softmax's y = 0 there zeroes it by itself; log_softmax's
// output is -inf whatever x is, so its gradient is 0, not dy (found as: every y_k = -inf).
void softmax_backward(real* dx, const real* dy, const real* y, const Split& sp, bool log) {
  const int64_t n = sp.n;
  for_each_block(sp, [&](int64_t base, auto stride, auto len) {
    const real *dyb = dy + base, *yb = y + base;
    real* dxb = dx + base;
    double s[kChunk];  // per row: sum_j dy_j y_j (softmax) or sum_j dy_j (log_softmax)
    bool live[kChunk];  // per row: some y_k > -inf (always true for softmax)
    for (int64_t j = 0; j < len; ++j) {
      s[j] = 0;
      live[j] = !log;
    }
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < len; ++j) {
        const real yk = yb[k * stride + j], dyk = dyb[k * stride + j];
        s[j] += log ? dyk : dyk * yk;
        live[j] = live[j] || yk != kNegInf;
      }
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < len; ++j) {
        if (!live[j]) continue;
        const real yk = yb[k * stride + j], dyk = dyb[k * stride + j], sj = real(s[j]);
        dxb[k * stride + j] += log ? dyk - std::exp(yk) * sj : yk * (dyk - sj);
      }
  });
}

// The op for both: forward kernel, then record the backward kernel on the saved output.
Tensor softmax_op(const char* op, const Tensor& x, int64_t dim, bool log) {
  const Split sp = split_at(x.shape(), wrap_dim(op, dim, x.dim()));
  Tensor y = empty(x.shape());
  softmax_forward(y.data(), x.data(), sp, log);
  return record(op, y, {x}, [y = y.detach(), sp, log](const Tensor& dy, Grads& g) {
    Tensor dx = zeros(y.shape());
    softmax_backward(dx.data(), dy.data(), y.data(), sp, log);
    g[0] = dx;
  });
}

}  // namespace

// y_k = exp(x_k - m) / sum_j exp(x_j - m)        dx_k = y_k * (dy_k - sum_j dy_j y_j)
Tensor softmax(const Tensor& x, int64_t dim) { return softmax_op("softmax", x, dim, false); }

// y_k = x_k - m - log(sum_j exp(x_j - m))        dx_k = dy_k - exp(y_k) * sum_j dy_j
Tensor log_softmax(const Tensor& x, int64_t dim) {
  return softmax_op("log_softmax", x, dim, true);
}

}  // namespace heed
