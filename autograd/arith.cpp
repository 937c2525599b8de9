// arith.cpp - arithmetic ops. Above each op: its forward and the derivative its backward
// applies. Gradients of broadcast operands are summed back to their shape by sum_to.
#include "arith.h"

#include <cmath>

#include "../core/elementwise.h"
#include "node.h"
#include "reduce.h"

namespace heed {

// dy * s for a backward below: written over dy when the engine holds it alone (node.h).
static Tensor scaled_gradient(const Tensor& dy, real s) {
  if (!sole_gradient(dy)) return mul(dy, s);
  Tensor g = dy;
  g.mul_(s);
  return g;
}

// y = a + b          da = dy          db = dy
Tensor add(const Tensor& a, const Tensor& b) {
  Tensor y = zip("add", a, b, [](real u, real v) { return u + v; });
  return record("add", y, {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& dy, Grads& g) {
    if (g.needs(0)) g[0] = sum_to(dy, sa);
    if (g.needs(1)) g[1] = sum_to(dy, sb);
  });
}

// y = a - b          da = dy          db = -dy
Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor y = zip("sub", a, b, [](real u, real v) { return u - v; });
  return record("sub", y, {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& dy, Grads& g) {
    if (g.needs(0)) g[0] = sum_to(dy, sa);
    if (g.needs(1)) g[1] = sum_to(neg(dy), sb);
  });
}

// y = a * b          da = dy * b      db = dy * a
Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor y = zip("mul", a, b, [](real u, real v) { return u * v; });
  return record("mul", y, {a, b},
                [a = SavedTensor(a), b = SavedTensor(b)](const Tensor& dy, Grads& g) {
    if (g.needs(0)) g[0] = sum_to(mul(dy, b), a.shape());
    if (g.needs(1)) g[1] = sum_to(mul(dy, a), b.shape());
  });
}

// y = a / b          da = dy / b      db = -dy * a / b^2 = -dy * y / b
Tensor div(const Tensor& a, const Tensor& b) {
  Tensor y = zip("div", a, b, [](real u, real v) { return u / v; });
  return record("div", y, {a, b}, [a, b = SavedTensor(b), y = SavedTensor(y.detach())](
                                      const Tensor& dy, Grads& g) {
    if (g.needs(0)) g[0] = sum_to(div(dy, b), a.shape());
    if (g.needs(1)) g[1] = sum_to(neg(mul(dy, div(y, b))), b.shape());
  });
}

// y = -x             dx = -dy
Tensor neg(const Tensor& x) {
  Tensor y = map(x, [](real v) { return -v; });
  return record("neg", y, {x}, [](const Tensor& dy, Grads& g) { g[0] = scaled_gradient(dy, -1); });
}

// y = x^p            dx = dy * p * x^(p-1)
Tensor pow(const Tensor& x, real p) {
  Tensor y = map(x, [p](real v) { return real(std::pow(v, p)); });
  return record("pow", y, {x}, [x = SavedTensor(x), p](const Tensor& dy, Grads& g) {
    g[0] = mul(dy, map(x, [p](real v) { return p * real(std::pow(v, p - 1)); }));
  });
}

// y = x^p            dx = dy * p * x^(p-1)     dp = dy * y * log(x)
Tensor pow(const Tensor& x, const Tensor& p) {
  Tensor y = zip("pow", x, p, [](real u, real v) { return real(std::pow(u, v)); });
  return record("pow", y, {x, p}, [x = SavedTensor(x), p = SavedTensor(p),
                                   y = SavedTensor(y.detach())](const Tensor& dy, Grads& g) {
    if (g.needs(0)) {
      Tensor d = zip("pow", x, p, [](real u, real v) { return v * real(std::pow(u, v - 1)); });
      g[0] = sum_to(mul(dy, d), x.shape());
    }
    if (g.needs(1)) {
      // y * log(x), taken as 0 where y == 0 (x == 0, p > 0) so the limit is used, not NaN
      Tensor d = zip("pow", y, expand(x, y.shape()), [](real yv, real xv) {
        return yv == 0 ? real(0) : yv * real(std::log(xv));
      });
      g[1] = sum_to(mul(dy, d), p.shape());
    }
  });
}

// y = x              dx = dy
Tensor clone(const Tensor& x) {
  Tensor y = map(x, [](real v) { return v; });
  return record("clone", y, {x}, [](const Tensor& dy, Grads& g) { g[0] = dy; });
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
  return record("add", y, {a}, [](const Tensor& dy, Grads& g) { g[0] = dy; });
}

// y = s - a          da = -dy
Tensor rsub(real s, const Tensor& a) {
  Tensor y = map(a, [s](real u) { return s - u; });
  return record("rsub", y, {a}, [](const Tensor& dy, Grads& g) { g[0] = scaled_gradient(dy, -1); });
}

// y = a * s          da = dy * s
Tensor mul(const Tensor& a, real s) {
  Tensor y = map(a, [s](real u) { return u * s; });
  return record("mul", y, {a}, [s](const Tensor& dy, Grads& g) { g[0] = scaled_gradient(dy, s); });
}

// y = a / s          da = dy / s
Tensor div(const Tensor& a, real s) {
  Tensor y = map(a, [s](real u) { return u / s; });
  return record("div", y, {a}, [s](const Tensor& dy, Grads& g) { g[0] = div(dy, s); });
}

Tensor operator+(const Tensor& a, real b) { return add(a, b); }
Tensor operator-(const Tensor& a, real b) { return add(a, -b); }
Tensor operator*(const Tensor& a, real b) { return mul(a, b); }
Tensor operator/(const Tensor& a, real b) { return div(a, b); }
Tensor operator+(real a, const Tensor& b) { return add(b, a); }
Tensor operator-(real a, const Tensor& b) { return rsub(a, b); }
Tensor operator*(real a, const Tensor& b) { return mul(b, a); }
Tensor operator/(real a, const Tensor& b) { return div(scalar_tensor(a), b); }

}  // namespace heed
