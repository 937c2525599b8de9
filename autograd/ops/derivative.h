// derivative.h - an op author's tools for an elementwise op y = f(x) whose forward pass also
// writes its derivative y' = f'(x), and whose second derivative f''(x) is written by hand.
//
//   map_with_derivative(x, d, fd)           (core/elementwise.h) y[i] = f(x[i]), d[i] = f'(x[i])
//                                           in one pass: fd(v, d) returns f(v) and sets d = f'(v)
//   record_derivative(op, y, x, dydx, f2)   records y = f(x) with  dx = dy * y'
//                                           and, under create_graph, dx = dy * y'(x), y' an op
//                                           of x whose own backward is  dx = dd * f2(x) = dd * f''(x)
//   map_recording_derivative(op, x, f, fd, f2)   the two above, and f alone when x needs no
//                                           gradient (no y' is written then)
//
// Use these when f' is costly or unstable to compose from heed ops (gelu's Phi, softplus's
// sigmoid, mish's tanh of softplus) and f'' has a closed form: the forward evaluates the
// expensive part once for y and y', the node keeps y' (and x, for a create_graph pass), the
// first-order backward is one multiply, the second derivative is the exact f'', and a third
// derivative raises (y' is recorded without kDoubleBackward) instead of returning a wrong 0.
// When f' is a short expression of heed ops, write the composed create_graph branch instead
// (autograd/README.md, step 1). gradgradcheck (gradcheck.h) checks f'' against finite
// differences of f'.
//
// Example, the shape of every use (ops/unary.cpp's gelu, softplus and mish are the real ones):
//   // y = log(1 + e^x)    dx = dy * s,  s = sigmoid(x)    f'' = s (1 - s)   (no threshold)
//   return map_recording_derivative("log1pexp", x,
//       [](real v) { return std::log1p(std::exp(v)); },
//       [](real v, real& d) { d = fastmath::sigmoid(v); return std::log1p(std::exp(v)); },
//       [](real v) { const real s = fastmath::sigmoid(v); return s * (1 - s); });
#pragma once
#include "../../core/elementwise.h"
#include "arith.h"
#include "../engine/node.h"

namespace heed {

namespace detail {
// y' = dydx as an op of x, for a create_graph pass: d = y'(x)    dx = dd * f2(x)
// Recorded without kDoubleBackward, so its own gradient is first order.
template <class Second>
Tensor derivative_op(const char* op, const Tensor& dydx, const Tensor& x, Second second) {
  return record(op, dydx.detach(), {x}, [x = SavedTensor(x), second](const Tensor& dd, Grads& g) {
    g[0] = mul(dd, map(x, second, kGrainTranscendental));
  });
}
}  // namespace detail

// Records y = f(x) for an op whose forward pass also wrote dydx = f'(x) (x's shape):
//   dx = dy * dydx                       (first order: one loop)
//   dx = dy * y'(x),  dy'/dx = f2(x)     (create_graph: y' recorded as an op of x)
// second(v) returns f''(v). The node keeps dydx and x; y is returned, recorded.
template <class Second>
Tensor record_derivative(const char* op, const Tensor& y, const Tensor& x, const Tensor& dydx,
                         Second second) {
  return record(op, y, {x}, kDoubleBackward, [op, dydx, x = SavedTensor(x), second](const Tensor& dy, Grads& g) {
    if (g.create_graph()) return void(g[0] = mul(dy, detail::derivative_op(op, dydx, x, second)));
    g[0] = zip(op, dy, dydx, [](real d, real s) { return d * s; });
  });
}

// y = f(x) as a recorded op: f(v) alone when x needs no gradient (or grad mode is off);
// otherwise fd(v, d) (f(v), setting d = f'(v)) in one pass and record_derivative with
// second(v) = f''(v). f and fd must agree on y: the same expression, so the same bits.
template <class F, class FD, class Second>
Tensor map_recording_derivative(const char* op, const Tensor& x, const F& f, const FD& fd,
                                Second second, int64_t grain = kGrainTranscendental) {
  if (!any_requires_grad({x})) return map(x, f, grain);
  Tensor dydx;  // (x's shape) y'(x)
  Tensor y = map_with_derivative(x, dydx, fd, grain);
  return record_derivative(op, y, x, dydx, second);
}

}  // namespace heed
