// compare.cpp - comparisons (0/1 masks), where, masked_fill, triu/tril.
//
// Comparisons record nothing, so their outputs never require grad. where, masked_fill
// and triu/tril pass values through: their backward routes dy to the positions that
// were passed and 0 elsewhere. A selected-away value never reaches the gradient, even
// as 0 * NaN, because the backward selects instead of multiplying by the mask.
#include "compare.h"

#include <algorithm>
#include <functional>

#include "../../core/elementwise.h"
#include "../../core/error.h"
#include "../engine/node.h"
#include "arith.h"
#include "reduce.h"

namespace heed {

namespace {

// y = pred(a, b) ? 1 : 0         (broadcasting; not differentiable)
template <class Pred>
Tensor compare(const char* op, const Tensor& a, const Tensor& b, Pred pred) {
  return zip(op, a, b, [pred](real u, real v) { return pred(u, v) ? real(1) : real(0); });
}

template <class Pred>
Tensor compare(const Tensor& a, real b, Pred pred) {
  return map(a, [pred, b](real u) { return pred(u, b) ? real(1) : real(0); });
}

}  // namespace

Tensor eq(const Tensor& a, const Tensor& b) { return compare("eq", a, b, std::equal_to<real>()); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare("ne", a, b, std::not_equal_to<real>()); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare("lt", a, b, std::less<real>()); }
Tensor le(const Tensor& a, const Tensor& b) { return compare("le", a, b, std::less_equal<real>()); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare("gt", a, b, std::greater<real>()); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare("ge", a, b, std::greater_equal<real>()); }
Tensor eq(const Tensor& a, real b) { return compare(a, b, std::equal_to<real>()); }
Tensor ne(const Tensor& a, real b) { return compare(a, b, std::not_equal_to<real>()); }
Tensor lt(const Tensor& a, real b) { return compare(a, b, std::less<real>()); }
Tensor le(const Tensor& a, real b) { return compare(a, b, std::less_equal<real>()); }
Tensor gt(const Tensor& a, real b) { return compare(a, b, std::greater<real>()); }
Tensor ge(const Tensor& a, real b) { return compare(a, b, std::greater_equal<real>()); }

// y = mask == 0 ? 1 : 0          (not differentiable)
Tensor logical_not(const Tensor& mask) {
  return map(mask, [](real m) { return m == 0 ? real(1) : real(0); });
}

namespace {

// The broadcast of three shapes; throws naming `op` and all three if they clash.
Shape broadcast3(const char* op, const Shape& a, const Shape& b, const Shape& c) {
  const int r = std::max({a.size(), b.size(), c.size()});
  Shape out;
  for (int i = 0; i < r; ++i) {
    int64_t n = 1;
    for (const Shape* s : {&a, &b, &c}) {
      const int j = s->size() - r + i;
      const int64_t d = j < 0 ? 1 : (*s)[j];
      if (d == 1) continue;
      HEED_CHECK(n == 1 || n == d, op, "shapes ", a, ", ", b, " and ", c, " cannot be broadcast");
      n = d;
    }
    out.push_back(n);
  }
  return out;
}

}  // namespace

// y = cond != 0 ? a : b          da = sum_to(cond != 0 ? dy : 0, a.shape)
//                                db = sum_to(cond != 0 ? 0 : dy, b.shape)
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  const Shape s = broadcast3("where", cond.shape(), a.shape(), b.shape());
  // Detached, so these broadcasts are plain copies (or no-ops where the shape is already s).
  const Tensor ce = expand(cond.detach(), s), ae = expand(a.detach(), s), be = expand(b.detach(), s);
  Tensor y = map3(ce, ae, be, [](real c, real u, real v) { return c != 0 ? u : v; });
  return record("where", y, {a, b}, kDoubleBackward,
                [c = SavedTensor(cond.detach()), sa = a.shape(), sb = b.shape()](
                                        const Tensor& dy, Grads& g) {
    if (g.create_graph()) {  // the same selections, recorded
      if (g.needs(0)) g[0] = sum_to(where(c, dy, scalar_tensor(0)), sa);
      if (g.needs(1)) g[1] = sum_to(where(c, scalar_tensor(0), dy), sb);
      return;
    }
    if (g.needs(0))
      g[0] = sum_to(zip("where", dy, c, [](real d, real m) { return m != 0 ? d : real(0); }), sa);
    if (g.needs(1))
      g[1] = sum_to(zip("where", dy, c, [](real d, real m) { return m != 0 ? real(0) : d; }), sb);
  });
}

// y = mask != 0 ? value : x      dx = mask != 0 ? 0 : dy
Tensor masked_fill(const Tensor& x, const Tensor& mask, real value) {
  HEED_CHECK(is_broadcastable_to(mask.shape(), x.shape()), "masked_fill", "mask of shape ",
             mask.shape(), " cannot be broadcast to x of shape ", x.shape());
  Tensor y = zip("masked_fill", x, mask, [value](real v, real m) { return m != 0 ? value : v; });
  return record("masked_fill", y, {x}, kDoubleBackward,
                [m = SavedTensor(mask.detach())](const Tensor& dy, Grads& g) {
    if (g.create_graph())  // the same selection, recorded (the mask broadcasts to dy)
      return void(g[0] = where(m, scalar_tensor(0), dy));
    g[0] = zip("masked_fill", dy, m, [](real d, real mv) { return mv != 0 ? real(0) : d; });
  });
}

namespace {

// Keep element (i, j) of each (R, C) matrix in the last two dims where j - i >= k (upper)
// or j - i <= k (lower); zero the rest. No graph: forward and backward both call it.
Tensor triangle_raw(const Tensor& x, int64_t k, bool upper) {
  const int r = x.dim();
  const int64_t R = x.shape()[r - 2], C = x.shape()[r - 1];
  const int64_t rows = dims_product(x.shape(), 0, r - 1);  // all dims but the last: one matrix row each
  k = std::clamp(k, -R - 1, C + 1);  // beyond these every row is all kept or all zeroed
  Tensor y = empty(x.shape());
  const real* px = x.data();
  real* py = y.data();
  parallel_for(rows, kGrainElementwise / (C + 1) + 1, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      const int64_t i = row % R;
      // upper keeps columns [i + k, C); lower keeps columns [0, i + k + 1)
      const int64_t j0 = upper ? std::clamp(i + k, int64_t{0}, C) : 0;
      const int64_t j1 = upper ? C : std::clamp(i + k + 1, int64_t{0}, C);
      const real* src = px + row * C;
      real* dst = py + row * C;
      for (int64_t j = 0; j < C; ++j) dst[j] = (j >= j0 && j < j1) ? src[j] : real(0);
    }
  });
  return y;
}

// y = triangle(x)                dx = triangle(dy)     (the same mask)
Tensor triangle(const char* op, const Tensor& x, int64_t k, bool upper) {
  HEED_CHECK(x.dim() >= 2, op, "needs a tensor of rank >= 2, got shape ", x.shape());
  Tensor y = triangle_raw(x, k, upper);
  return record(op, y, {x}, kDoubleBackward, [op, k, upper](const Tensor& dy, Grads& g) {
    g[0] = g.create_graph() ? triangle(op, dy, k, upper) : triangle_raw(dy, k, upper);
  });
}

}  // namespace

Tensor triu(const Tensor& x, int64_t k) { return triangle("triu", x, k, true); }
Tensor tril(const Tensor& x, int64_t k) { return triangle("tril", x, k, false); }

}  // namespace heed
