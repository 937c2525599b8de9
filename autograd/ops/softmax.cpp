// softmax.cpp - softmax and log_softmax over one dim: raw forward and backward kernels,
// and the two ops that record them.
//
// x is seen as (outer, n, inner) (reduce_util.h): each (o, i) is one row x[o, :, i] of n
// elements, inner apart, normalised on its own. Two layouts, two kernels of each:
//   inner == 1  the last dim (attention scores, logits): rows are contiguous, and a row
//               kernel makes a few passes over one row, each a loop that vectorises (the
//               max, the exps, their sum, the scaling; core/elementwise.h's row_*). The
//               rows are the tasks of the parallel loop.
//   inner > 1   a block kernel takes up to kChunk neighbouring rows side by side
//               (for_each_block), so its innermost loop runs across rows over contiguous
//               memory, however large the stride.
// Inner loops have no branches: exp is fastmath::exp, and the special rows below are
// handled per row, outside them.
//
// Fully masked rows (every x = -inf, the max m = -inf, so x - m would be NaN): softmax
// writes 0 and log_softmax -inf, and both backward kernels give them zero gradient.
// Positions that are -inf in a row with some finite entry get probability 0 as usual.
// A NaN anywhere in a row makes the whole row NaN, as in PyTorch.
#include "softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "../../core/elementwise.h"
#include "../../core/fastmath.h"
#include "../../core/parallel.h"
#include "../../core/shape.h"
#include "../engine/node.h"
#include "arith.h"
#include "reduce.h"
#include "reduce_util.h"
#include "unary.h"

namespace heed {

namespace {

using detail::Split;
using detail::split_at;

constexpr real kNegInf = -std::numeric_limits<real>::infinity();

// ---------------------------------------------------------------- contiguous rows

// softmax:      y_k = exp(x_k - m) / s        m = max_j x_j,  s = sum_j exp(x_j - m)
// log_softmax:  y_k = (x_k - m) - log(s)
// Writes y[0, n) from x[0, n).
void forward_row(real* y, const real* x, int64_t n, bool log) {
  // 1. m = the row max (NaN if any x_k is NaN)
  const real m = row_max(x, n);
  if (m == kNegInf) {  // fully masked
    std::fill(y, y + n, log ? kNegInf : real(0));
    return;
  }
  if (log) {
    // 2. s = sum_k exp(x_k - m)          3. y_k = (x_k - m) - log(s)
    const real ls = real(std::log(row_sum_exp(x, n, m)));
    for (int64_t k = 0; k < n; ++k) y[k] = (x[k] - m) - ls;
  } else {
    // 2. y_k = exp(x_k - m), s = sum_k y_k    3. y_k = y_k / s
    for (int64_t k = 0; k < n; ++k) y[k] = fastmath::exp(x[k] - m);
    const real r = real(1 / row_sum(y, n));
    for (int64_t k = 0; k < n; ++k) y[k] *= r;
  }
}

// softmax:      dx_k += y_k * (dy_k - sum_j dy_j y_j)
// log_softmax:  dx_k += dy_k - exp(y_k) * sum_j dy_j
// Accumulates into dx[0, n); y is the forward's output. A fully masked row gets nothing:
// softmax's y = 0 there zeroes it by itself; log_softmax's output is -inf whatever x is, so
// its gradient is 0, not dy (found as: every y_k = -inf).
void backward_row(real* dx, const real* dy, const real* y, int64_t n, bool log) {
  if (log) {
    if (row_max(y, n) == kNegInf) return;
    const real s = real(row_sum(dy, n));
    for (int64_t k = 0; k < n; ++k) dx[k] += dy[k] - fastmath::exp(y[k]) * s;
  } else {
    const real s = real(row_dot(dy, y, n));
    for (int64_t k = 0; k < n; ++k) dx[k] += y[k] * (dy[k] - s);
  }
}

// ---------------------------------------------------------------- strided rows

constexpr int64_t kChunk = 256;     // rows per block
constexpr int64_t kSumStretch = 16;  // k-steps summed in `real` before adding into double

// The same two kernels on `len` rows side by side: element k of row j is at k * stride + j.
// A fully masked row runs through the same loops with m = 0 and factor 0, which give
// exp(-inf) = 0 and y = 0 (softmax) or (-inf - 0) - 0 = -inf (log_softmax): no branch.
void forward_block(real* y, const real* x, int64_t n, int64_t stride, int64_t len, bool log) {
  real m[kChunk], nan[kChunk], acc[kChunk], f[kChunk];
  double s[kChunk];
  // 1. m = the row max; NaN if any element is NaN; masked rows: m = 0
  for (int64_t j = 0; j < len; ++j) m[j] = kNegInf, nan[j] = 0;
  for (int64_t k = 0; k < n; ++k)
    for (int64_t j = 0; j < len; ++j) {
      const real v = x[k * stride + j];
      m[j] = v > m[j] ? v : m[j];
      nan[j] = v != v ? v : nan[j];
    }
  for (int64_t j = 0; j < len; ++j) m[j] = nan[j] != nan[j] ? nan[j] : (m[j] == kNegInf ? 0 : m[j]);
  // 2. y_k = exp(x_k - m), s = sum_k y_k (in `real` over kSumStretch steps, then in double)
  for (int64_t j = 0; j < len; ++j) s[j] = 0;
  for (int64_t k0 = 0; k0 < n; k0 += kSumStretch) {
    for (int64_t j = 0; j < len; ++j) acc[j] = 0;
    for (int64_t k = k0; k < std::min(n, k0 + kSumStretch); ++k)
      for (int64_t j = 0; j < len; ++j) {
        const real e = fastmath::exp(x[k * stride + j] - m[j]);
        y[k * stride + j] = e;
        acc[j] += e;
      }
    for (int64_t j = 0; j < len; ++j) s[j] += acc[j];
  }
  // 3. softmax: y_k = y_k / s;  log_softmax: y_k = (x_k - m) - log(s); masked rows: factor 0
  for (int64_t j = 0; j < len; ++j)
    f[j] = s[j] == 0 ? real(0) : log ? real(std::log(s[j])) : real(1 / s[j]);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t j = 0; j < len; ++j) {
      real& yk = y[k * stride + j];
      yk = log ? (x[k * stride + j] - m[j]) - f[j] : yk * f[j];
    }
}

// A masked log_softmax row (every y_k = -inf) gets weight 0 on both terms.
void backward_block(real* dx, const real* dy, const real* y, int64_t n, int64_t stride,
                    int64_t len, bool log) {
  real acc[kChunk], ymax[kChunk], live[kChunk];
  double s[kChunk];
  for (int64_t j = 0; j < len; ++j) s[j] = 0, ymax[j] = kNegInf;
  for (int64_t k0 = 0; k0 < n; k0 += kSumStretch) {
    for (int64_t j = 0; j < len; ++j) acc[j] = 0;
    for (int64_t k = k0; k < std::min(n, k0 + kSumStretch); ++k)
      for (int64_t j = 0; j < len; ++j) {
        const real yk = y[k * stride + j], dyk = dy[k * stride + j];
        acc[j] += log ? dyk : dyk * yk;
        ymax[j] = yk > ymax[j] ? yk : ymax[j];
      }
    for (int64_t j = 0; j < len; ++j) s[j] += acc[j];
  }
  for (int64_t j = 0; j < len; ++j) {
    live[j] = !log || ymax[j] != kNegInf ? real(1) : real(0);
    acc[j] = real(s[j]) * live[j];
  }
  for (int64_t k = 0; k < n; ++k)
    for (int64_t j = 0; j < len; ++j) {
      const real yk = y[k * stride + j], dyk = dy[k * stride + j];
      dx[k * stride + j] += log ? live[j] * dyk - fastmath::exp(yk) * acc[j] : yk * (dyk - acc[j]);
    }
}

// ---------------------------------------------------------------- the parallel loops

// Calls row(base) for every contiguous row (inner == 1) or block(base, len) for every block
// of up to kChunk neighbouring rows (o, i0), ..., (o, i0 + len - 1), in parallel (an exp
// per element: kGrainTranscendental).
template <class RowFn, class BlockFn>
void for_each_row(const Split& sp, const RowFn& row, const BlockFn& block) {
  if (sp.outer * sp.inner == 0) return;  // no rows
  if (sp.inner == 1) {
    parallel_for(sp.outer, kGrainTranscendental / (sp.n + 1) + 1, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) row(o * sp.n);
    });
    return;
  }
  const int64_t width = std::min(sp.inner, kChunk);
  const int64_t chunks = (sp.inner + width - 1) / width;
  parallel_for(sp.outer * chunks, kGrainTranscendental / (sp.n * width + 1) + 1,
               [&](int64_t b, int64_t e) {
    for (int64_t w = b; w < e; ++w) {
      const int64_t o = w / chunks, i0 = (w % chunks) * width;
      block((o * sp.n) * sp.inner + i0, std::min(width, sp.inner - i0));
    }
  });
}

// Each row or block runs at the CPU's level (run_at_cpu_level, core/cpu.h: the kernels above
// compiled for v2, AVX2 and AVX-512).
void softmax_forward(real* y, const real* x, const Split& sp, bool log) {
  for_each_row(
      sp, [&](int64_t base) { run_at_cpu_level([&] { forward_row(y + base, x + base, sp.n, log); }); },
      [&](int64_t base, int64_t len) {
        run_at_cpu_level([&] { forward_block(y + base, x + base, sp.n, sp.inner, len, log); });
      });
}

void softmax_backward(real* dx, const real* dy, const real* y, const Split& sp, bool log) {
  for_each_row(
      sp,
      [&](int64_t base) {
        run_at_cpu_level([&] { backward_row(dx + base, dy + base, y + base, sp.n, log); });
      },
      [&](int64_t base, int64_t len) {
        run_at_cpu_level([&] { backward_block(dx + base, dy + base, y + base, sp.n, sp.inner, len, log); });
      });
}

// The op for both: forward kernel, then record the backward kernel on the saved output.
Tensor softmax_op(const char* op, const Tensor& x, int64_t dim, bool log) {
  const Split sp = split_at(x.shape(), wrap_dim(op, dim, x.dim()));
  Tensor y = empty(x.shape());
  softmax_forward(y.data(), x.data(), sp, log);
  return record(op, y, {x}, kDoubleBackward, [y = SavedTensor(y.detach()), sp, log](const Tensor& dy, Grads& g) {
    if (g.create_graph()) {  // the formulas below from recorded ops, x seen as (outer, n, inner)
      const Shape s3{sp.outer, sp.n, sp.inner};
      const Tensor yy = g.output(y).reshape(s3), d = dy.reshape(s3);
      const Tensor dx = log ? d - exp(yy) * sum(d, 1, true) : yy * (d - sum(d * yy, 1, true));
      return void(g[0] = dx.reshape(y.shape()));
    }
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

// ---------------------------------------------------------------- the composed twins

// y = exp(x - m) / sum(exp(x - m))        m = max over dim, detached
Tensor softmax_reference(const Tensor& x, int64_t dim) {
  const Tensor e = exp(x - max(x.detach(), dim, /*keepdim=*/true).values);
  return e / sum(e, dim, /*keepdim=*/true);
}

// y = (x - m) - log(sum(exp(x - m)))
Tensor log_softmax_reference(const Tensor& x, int64_t dim) {
  const Tensor shifted = x - max(x.detach(), dim, /*keepdim=*/true).values;
  return shifted - log(sum(exp(shifted), dim, /*keepdim=*/true));
}

}  // namespace heed
