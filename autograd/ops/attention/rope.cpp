// rope.cpp - RoPE: the cos/sin table, the rotation kernel, its backward, the composed twin.
//
//   forward   y_a = x_a cos - x_b sin        y_b = x_a sin + x_b cos      (rotate by +m theta_i)
//   backward  dx_a = dy_a cos + dy_b sin     dx_b = -dy_a sin + dy_b cos  (rotate by -m theta_i)
// The backward is the forward kernel run with sin negated, so one kernel serves both.
#include "rope.h"

#include <cmath>

#include "../../../core/error.h"
#include "../../../core/parallel.h"
#include "../../engine/composed_backward.h"
#include "../../engine/node.h"
#include "../arith.h"
#include "../shape.h"

namespace heed {

RotaryTable rotary_table(int64_t positions, int64_t D, double base, int64_t first, bool half_split) {
  HEED_CHECK(D > 0 && D % 2 == 0, "rotary_table", "the rotated dim D must be even and > 0; got ", D);
  HEED_CHECK(positions >= 0 && first >= 0, "rotary_table", "positions ", positions, " and first ",
             first, " must be >= 0");
  HEED_CHECK(base > 0, "rotary_table", "base must be > 0; got ", base);
  HEED_CHECK(positions <= kMaxRotaryPosition + 1 && first <= kMaxRotaryPosition + 1 - positions,
             "rotary_table", positions, " positions from first ", first,
             " go past the last position ", kMaxRotaryPosition, " a table may hold");
  const int64_t half = D / 2;
  RotaryTable t{empty({positions, half}), empty({positions, half}), first, half_split};
  real *pc = t.cos.data(), *ps = t.sin.data();
  for (int64_t i = 0; i < half; ++i) {
    const double theta = std::pow(base, -2.0 * double(i) / double(D));  // base^(-2i/D)
    for (int64_t r = 0; r < positions; ++r) {
      const double angle = double(first + r) * theta;  // m theta_i, in double: m can be large
      pc[r * half + i] = real(std::cos(angle));
      ps[r * half + i] = real(std::sin(angle));
    }
  }
  return t;
}

// The kernel, over N = numel / (T*D) independent (T, D) blocks:
//   out_a = in_a * c - in_b * (sign * s)      out_b = in_a * (sign * s) + in_b * c
// for pair i of row t, with c, s = cos/sin row (row0 + t). sign = +1 forward, -1 backward.
// Pair i is (2i, 2i+1) interleaved, or (i, i + D/2) half-split.
static void rotate(const real* in, real* out, const real* cos_tab, const real* sin_tab, int64_t N,
                   int64_t T, int64_t D, int64_t row0, bool half_split, real sign) {
  const int64_t half = D / 2;
  const int64_t step = half_split ? 1 : 2, offset_b = half_split ? half : 1;
  parallel_for(N * T, kGrainElementwise / (D + 1) + 1, [&](int64_t begin, int64_t end) {
    for (int64_t nt = begin; nt < end; ++nt) {  // row nt of x seen as (N*T, D); table row row0 + t
      const int64_t t = nt % T;
      const real* c = cos_tab + (row0 + t) * half;
      const real* s = sin_tab + (row0 + t) * half;
      const real* x = in + nt * D;
      real* y = out + nt * D;
      for (int64_t i = 0; i < half; ++i) {
        const int64_t a = i * step, b = a + offset_b;
        const real xa = x[a], xb = x[b], si = sign * s[i];
        y[a] = xa * c[i] - xb * si;
        y[b] = xa * si + xb * c[i];
      }
    }
  });
}

static void check_fits(const char* op, const Tensor& x, const RotaryTable& t, int64_t row) {
  HEED_CHECK(x.dim() >= 2, op, "x must be (..., T, D); got ", x.shape());
  const int64_t T = x.size(-2), D = x.size(-1);
  HEED_CHECK(t.cos.defined() && D == 2 * t.cos.size(1), op, "x ", x.shape(), " has D = ", D,
             " but the table is for D = ", t.cos.defined() ? 2 * t.cos.size(1) : 0);
  HEED_CHECK(row >= 0 && row <= t.cos.size(0) - T, op, "T = ", T, " rows from row ", row,
             " are outside the table's ", t.cos.size(0), " positions");
}

Tensor rotary(const Tensor& x, const RotaryTable& table, int64_t row) {
  check_fits("rotary", x, table, row);
  const int64_t T = x.size(-2), D = x.size(-1), N = T * D > 0 ? x.numel() / (T * D) : 0;
  Tensor y = empty(x.shape());  // (..., T, D)
  rotate(x.data(), y.data(), table.cos.data(), table.sin.data(), N, T, D, row, table.half_split, 1);
  // Saved: the table (shared, not copied) and the sizes; not x, not y.
  return record("rotary", y, {x}, kDoubleBackward, [table, N, T, D, row](const Tensor& dy, Grads& g) {
    // Under create_graph: the composed twin (composed_backward.h); dx depends on dy alone
    // (a rotation), so the twin runs on a stand-in for x.
    if (g.create_graph())
      return detail::composed_gradients([&](const std::vector<Tensor>& in) {
        return rotary_reference(in[0], table, row);
      }, {zeros(dy.shape()).requires_grad_()}, dy, g);
    Tensor dx = empty(dy.shape());
    rotate(dy.data(), dx.data(), table.cos.data(), table.sin.data(), N, T, D, row,
           table.half_split, -1);
    g[0] = dx;
  });
}

// The composed twin. With x_a, x_b the two members of every pair laid side by side:
//   interleaved  x (..., T, D) -> (..., T, D/2, 2): x_a = [..., 0], x_b = [..., 1]
//   half_split   x_a = x[..., :D/2], x_b = x[..., D/2:]
// y_a = x_a cos - x_b sin, y_b = x_a sin + x_b cos, then put back together.
Tensor rotary_reference(const Tensor& x, const RotaryTable& table, int64_t row) {
  check_fits("rotary_reference", x, table, row);
  const int64_t T = x.size(-2), half = x.size(-1) / 2;
  Tensor c = narrow(table.cos, 0, row, T), s = narrow(table.sin, 0, row, T);  // (T, D/2)
  if (table.half_split) {
    Tensor xa = narrow(x, -1, 0, half), xb = narrow(x, -1, half, half);  // (..., T, D/2)
    return cat({xa * c - xb * s, xa * s + xb * c}, -1);
  }
  Shape pairs = x.shape();
  pairs[pairs.size() - 1] = half;
  pairs.push_back(2);
  Tensor xp = reshape(x, pairs);                                         // (..., T, D/2, 2)
  Tensor xa = narrow(xp, -1, 0, 1), xb = narrow(xp, -1, 1, 1);           // (..., T, D/2, 1)
  c = reshape(c, {T, half, 1});
  s = reshape(s, {T, half, 1});
  return reshape(cat({xa * c - xb * s, xa * s + xb * c}, -1), x.shape());
}

}  // namespace heed
