// arith.cpp - arithmetic ops. Above each op: its forward and the derivative its backward
// applies. Gradients of broadcast operands are summed back to their shape by sum_to.
#include "arith.h"

#include <cmath>

#include "../../core/elementwise.h"
#include "../engine/node.h"
#include "broadcast.h"

namespace heed {

// dy * s for a backward below: written over dy when the engine holds it alone (node.h).
static Tensor scaled_gradient(const Tensor& dy, real s) {
  if (!sole_gradient(dy)) return mul(dy, s);
  Tensor g = dy;
  g.impl()->view = ViewMark{};  // the engine's own buffer, even when a view op's backward made it
  g.mul_(s);
  return g;
}

// y = a + b          da = dy          db = dy
Tensor add(const Tensor& a, const Tensor& b) {
  Tensor y = zip("add", a, b, [](real u, real v) { return u + v; });
  return record("add", y, {a, b}, kDoubleBackward, [sa = a.shape(), sb = b.shape()](const Tensor& dy, Grads& g) {
    if (g.needs(0)) g[0] = sum_to(dy, sa);
    if (g.needs(1)) g[1] = sum_to(dy, sb);
  });
}

// y = a - b          da = dy          db = -dy
Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor y = zip("sub", a, b, [](real u, real v) { return u - v; });
  return record("sub", y, {a, b}, kDoubleBackward, [sa = a.shape(), sb = b.shape()](const Tensor& dy, Grads& g) {
    if (g.needs(0)) g[0] = sum_to(dy, sa);
    if (g.needs(1)) g[1] = sum_to(neg(dy), sb);
  });
}

// y = a * b          da = dy * b      db = dy * a
Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor y = zip("mul", a, b, [](real u, real v) { return u * v; });
  return record("mul", y, {a, b}, kDoubleBackward,
                [a = SavedTensor(a), b = SavedTensor(b)](const Tensor& dy, Grads& g) {
    if (g.needs(0)) g[0] = sum_to(mul(dy, b), a.shape());
    if (g.needs(1)) g[1] = sum_to(mul(dy, a), b.shape());
  });
}

// y = a / b          da = dy / b      db = -dy * a / b^2 = -dy * y / b
// (Under create_graph y is g.output(y), the op's output again, so db is differentiable
// through it: node.h.)
Tensor div(const Tensor& a, const Tensor& b) {
  Tensor y = zip("div", a, b, [](real u, real v) { return u / v; });
  return record("div", y, {a, b}, kDoubleBackward, [sa = a.shape(), b = SavedTensor(b),
                                                    y = SavedTensor(y.detach())](
                                                       const Tensor& dy, Grads& g) {
    if (g.needs(0)) g[0] = sum_to(div(dy, b), sa);
    if (g.needs(1)) g[1] = sum_to(neg(mul(dy, div(g.output(y), b))), b.shape());
  });
}

// y = -x             dx = -dy
Tensor neg(const Tensor& x) {
  Tensor y = map(x, [](real v) { return -v; });
  return record("neg", y, {x}, kDoubleBackward, [](const Tensor& dy, Grads& g) { g[0] = scaled_gradient(dy, -1); });
}

namespace {

// x^p for a number p, as PyTorch's pow(tensor, scalar): p = 0.5 is sqrt(x) and p = -0.5
// is 1 / sqrt(x), which differ from std::pow only at x = -0 (-0 and -inf, not +0 and +inf).
real pow_scalar(real x, real p) {
  if (p == real(0.5)) return std::sqrt(x);
  if (p == real(-0.5)) return 1 / std::sqrt(x);
  return real(std::pow(x, p));
}

}  // namespace

// y = x^p            dx = dy * p * x^(p-1),  0 when p = 0
// At p = 0, y = 1 is constant, so dx = 0 everywhere, also at x = 0 where p * x^(p-1) would
// be 0 * inf = NaN (PyTorch masks it the same way). Edge values: tests/test_edge_points.cpp.
Tensor pow(const Tensor& x, real p) {
  Tensor y = map(x, [p](real v) { return pow_scalar(v, p); });
  return record("pow", y, {x}, kDoubleBackward, [x = SavedTensor(x), p](const Tensor& dy, Grads& g) {
    if (p == 0) {
      g[0] = zeros(x.shape());
      return;
    }
    if (g.create_graph()) {  // the same formula from recorded ops
      g[0] = mul(dy, mul(pow(x, p - 1), p));
      return;
    }
    g[0] = mul(dy, map(x, [p](real v) { return p * pow_scalar(v, p - 1); }));
  });
}

// y = x              dx = dy
Tensor clone(const Tensor& x) {
  Tensor y = map(x, [](real v) { return v; });
  return record("clone", y, {x}, kDoubleBackward, [](const Tensor& dy, Grads& g) { g[0] = dy; });
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& x) { return neg(x); }
// ---- with a plain number: no scalar tensor is made, and the node saves only the number
// (a chain of `x * 0.5` costs one output and one node per op, not a third tensor).

// y = a + s          da = dy
Tensor add(const Tensor& a, real s) {
  Tensor y = map(a, [s](real u) { return u + s; });
  return record("add", y, {a}, kDoubleBackward, [](const Tensor& dy, Grads& g) { g[0] = dy; });
}

// y = s - a          da = -dy
Tensor rsub(real s, const Tensor& a) {
  Tensor y = map(a, [s](real u) { return s - u; });
  return record("rsub", y, {a}, kDoubleBackward, [](const Tensor& dy, Grads& g) { g[0] = scaled_gradient(dy, -1); });
}

// y = a * s          da = dy * s
Tensor mul(const Tensor& a, real s) {
  Tensor y = map(a, [s](real u) { return u * s; });
  return record("mul", y, {a}, kDoubleBackward, [s](const Tensor& dy, Grads& g) { g[0] = scaled_gradient(dy, s); });
}

// y = a / s          da = dy / s
Tensor div(const Tensor& a, real s) {
  Tensor y = map(a, [s](real u) { return u / s; });
  return record("div", y, {a}, kDoubleBackward, [s](const Tensor& dy, Grads& g) { g[0] = div(dy, s); });
}

Tensor operator+(const Tensor& a, real b) { return add(a, b); }
Tensor operator-(const Tensor& a, real b) { return named("sub", add(a, -b), {a}); }
Tensor operator*(const Tensor& a, real b) { return mul(a, b); }
Tensor operator/(const Tensor& a, real b) { return div(a, b); }
Tensor operator+(real a, const Tensor& b) { return add(b, a); }
Tensor operator-(real a, const Tensor& b) { return rsub(a, b); }
Tensor operator*(real a, const Tensor& b) { return mul(b, a); }
Tensor operator/(real a, const Tensor& b) { return div(scalar_tensor(a), b); }

}  // namespace heed
