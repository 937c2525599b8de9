// unary.cpp - elementwise functions of one tensor. Above each op: its forward and the
// derivative its backward applies. Forward and backward are single map/zip loops
// (core/elementwise.h); a backward that reads the output saves it as y.detach().
// Under create_graph (node.h) each backward computes the same derivative from recorded ops
// instead, reading a saved output as g.output(y); a mask (relu, clamp, elu) selects with
// where(), as PyTorch's threshold_backward does, so an inf or NaN in the dropped part of a
// second-order gradient is dropped, not turned into 0 * inf = NaN.
// Transcendentals are fastmath:: (core/fastmath.h): vectorised float kernels in the float
// build, std:: itself in the double build.
#include "unary.h"

#include <cmath>
#include <limits>

#include "../../core/elementwise.h"
#include "../../core/error.h"
#include "../../core/fastmath.h"
#include "../../core/gelu.h"
#include "../../core/gemm_epilogue.h"
#include "../engine/node.h"
#include "arith.h"
#include "compare.h"
#include "derivative.h"

namespace heed {

// y = e^x            dx = dy * y
Tensor exp(const Tensor& x) {
  Tensor y = map(x, [](real v) { return fastmath::exp(v); }, kGrainTranscendental);
  return record("exp", y, {x}, kDoubleBackward, [y = SavedTensor(y.detach())](const Tensor& dy, Grads& g) {
    if (g.create_graph()) return void(g[0] = mul(dy, g.output(y)));
    g[0] = zip("exp", dy, y, [](real d, real yv) { return d * yv; });
  });
}

// y = log(x)         dx = dy / x
Tensor log(const Tensor& x) {
  Tensor y = map(x, [](real v) { return fastmath::log(v); }, kGrainTranscendental);
  return record("log", y, {x}, kDoubleBackward, [x = SavedTensor(x)](const Tensor& dy, Grads& g) {
    if (g.create_graph()) return void(g[0] = div(dy, x));
    g[0] = zip("log", dy, x, [](real d, real xv) { return d / xv; });
  });
}

// y = log(1 + x)     dx = dy / (1 + x)
// std::log1p keeps the digits of a tiny x that 1 + x would round away (log1p(1e-10) is
// 1e-10; log(1 + 1e-10f) is 0 in float). Not vectorised: no fastmath kernel for it yet.
Tensor log1p(const Tensor& x) {
  Tensor y = map(x, [](real v) { return std::log1p(v); }, kGrainTranscendental);
  return record("log1p", y, {x}, kDoubleBackward, [x = SavedTensor(x)](const Tensor& dy, Grads& g) {
    if (g.create_graph()) return void(g[0] = div(dy, add(x, 1)));
    g[0] = zip("log1p", dy, x, [](real d, real xv) { return d / (1 + xv); });
  });
}

// y = sqrt(x)        dx = dy / (2 y)
Tensor sqrt(const Tensor& x) {
  Tensor y = map(x, [](real v) { return std::sqrt(v); });
  return record("sqrt", y, {x}, kDoubleBackward, [y = SavedTensor(y.detach())](const Tensor& dy, Grads& g) {
    if (g.create_graph()) return void(g[0] = div(dy, mul(g.output(y), 2)));
    g[0] = zip("sqrt", dy, y, [](real d, real yv) { return d / (2 * yv); });
  });
}

// y = tanh(x)        dx = dy * (1 - y^2)
Tensor tanh(const Tensor& x) {
  Tensor y = map(x, [](real v) { return fastmath::tanh(v); }, kGrainTranscendental);
  return record("tanh", y, {x}, kDoubleBackward, [y = SavedTensor(y.detach())](const Tensor& dy, Grads& g) {
    if (g.create_graph()) {
      const Tensor t = g.output(y);
      return void(g[0] = mul(dy, rsub(1, mul(t, t))));
    }
    g[0] = zip("tanh", dy, y, [](real d, real yv) { return d * (1 - yv * yv); });
  });
}

// y = 1 / (1 + e^-x)   dx = dy * y * (1 - y)
// Stable for large |x| (fastmath::sigmoid): exp is only taken of -|x|, so it never
// overflows. Each one-line form breaks on one side: e^x / (1 + e^x) is inf / inf = NaN at
// x = 100, and 1 / (1 + e^-x) overflows e^100 at x = -100 (rescued only because 1 / inf = 0).
Tensor sigmoid(const Tensor& x) {
  Tensor y = map(x, [](real v) { return fastmath::sigmoid(v); }, kGrainTranscendental);
  return record("sigmoid", y, {x}, kDoubleBackward, [y = SavedTensor(y.detach())](const Tensor& dy, Grads& g) {
    if (g.create_graph()) {
      const Tensor s = g.output(y);
      return void(g[0] = mul(dy, mul(s, rsub(1, s))));
    }
    g[0] = zip("sigmoid", dy, y, [](real d, real yv) { return d * yv * (1 - yv); });
  });
}

// y = max(x, 0)      dx = dy * !(x <= 0)        (0 at x = 0, as PyTorch)
// NaN stays NaN and, as PyTorch's threshold_backward (0 where y <= 0, else dy), passes dy.
Tensor relu(const Tensor& x) {
  Tensor y = map(x, [](real v) { return v < 0 ? real(0) : v; });
  // y > 0 exactly where x > 0, so the output is the only state the backward needs.
  return record("relu", y, {x}, kDoubleBackward, [y = SavedTensor(y.detach())](const Tensor& dy, Grads& g) {
    if (g.create_graph())
      return void(g[0] = where(map(y, [](real yv) { return real(!(yv <= 0)); }), dy, scalar_tensor(0)));
    g[0] = zip("relu", dy, y, [](real d, real yv) { return yv <= 0 ? real(0) : d; });
  });
}

namespace {

// erf form: y'' = phi(x) (2 - x^2)
real gelu_erf_second(real v) { return real(0.39894228040143267794) * fastmath::exp(-v * v / 2) * (2 - v * v); }

// tanh form: y = x s, s = sigmoid(2u): y' = s + x s', s' = 2 s (1 - s) u', and
// y'' = 2 s' + x (s' 2 u' (1 - 2 s) + 2 s (1 - s) u''),  u'' = 6 sqrt(2/pi) 0.044715 x
real gelu_tanh_second(real v) {
  const real k = real(gelu_math::kSqrt2OverPi), c = real(gelu_math::kCubic);
  const real u = k * (v + c * v * v * v);
  const real du = k * (1 + 3 * c * v * v);
  const real d2u = 6 * k * c * v;
  const real s = fastmath::sigmoid(2 * u), q = s * (1 - s), ds = 2 * q * du;
  return 2 * ds + v * (ds * 2 * du * (1 - 2 * s) + 2 * q * d2u);
}

}  // namespace

// y = gelu(x)       dx = dy * y'(x)        (both forms and their derivatives: core/gelu.h)
// When x needs a gradient, the forward pass also writes y' (from the same Phi and exp) and
// the node keeps it beside x, so the backward is one multiply instead of a second evaluation
// of Phi (derivative.h). The fused Linear + GELU (autograd/ops/linear.cpp) computes the same
// values.
Tensor gelu(const Tensor& x, const std::string& approximate) {
  using namespace gelu_math;
  if (gelu_activation(approximate) == GemmActivation::gelu_erf)  // heed::Error for another name
    return map_recording_derivative("gelu", x, [](real v) { return erf_form(v); }, [](real v, real& d) { return erf_form(v, d); },
                     gelu_erf_second);
  return map_recording_derivative("gelu", x, [](real v) { return tanh_form(v); }, [](real v, real& d) { return tanh_form(v, d); },
                   gelu_tanh_second);
}

// y = x > 0 ? x : alpha (e^x - 1)     dx = dy * (x > 0 ? 1 : alpha e^x)
// (Both sides are computed, then one is picked: a loop with arithmetic inside one arm of
// `?:` does not vectorise, see core/fastmath.h.)
Tensor elu(const Tensor& x, real alpha) {
  Tensor y = map(x, [alpha](real v) {
    const real neg = alpha * fastmath::expm1(v);
    return v > 0 ? v : neg;
  }, kGrainTranscendental);
  return record("elu", y, {x}, kDoubleBackward, [x = SavedTensor(x), alpha](const Tensor& dy, Grads& g) {
    if (g.create_graph())  // x > 0 ? dy : dy * alpha e^x
      return void(g[0] = where(map(x, [](real v) { return real(v > 0); }), dy, mul(dy, mul(exp(x), alpha))));
    g[0] = zip("elu", dy, x, [alpha](real d, real v) {
      const real neg = d * alpha * fastmath::exp(v);
      return v > 0 ? d : neg;
    }, kGrainTranscendental);
  });
}

// y = x > 0 ? x : slope * x     dx = dy * (x > 0 ? 1 : slope)     (slope at x = 0, as PyTorch)
Tensor leaky_relu(const Tensor& x, real slope) {
  Tensor y = map(x, [slope](real v) {
    const real neg = slope * v;  // computed, then picked: the loop vectorises (as elu's)
    return v > 0 ? v : neg;
  });
  return record("leaky_relu", y, {x}, kDoubleBackward, [x = SavedTensor(x), slope](const Tensor& dy, Grads& g) {
    if (g.create_graph())
      return void(g[0] = where(map(x, [](real v) { return real(v > 0); }), dy, mul(dy, slope)));
    g[0] = zip("leaky_relu", dy, x, [slope](real d, real v) {
      const real neg = slope * d;
      return v > 0 ? d : neg;
    });
  });
}

// y = bx > t ? x : log(1 + e^(bx)) / b     dx = dy * (bx > t ? 1 : s),  s = e^(bx) / (1 + e^(bx))
//                                           f'' = bx < t ? b s (1 - s) : 0
// b = beta, t = threshold. PyTorch's softplus, its rule and its formulas: above the threshold
// y is x itself (log(1 + e^(bx)) / b is x within e^-t there), so e^(bx) is only ever taken
// of bx <= t and never overflows for the default t = 20; below, e^(bx) underflows to 0 and
// log1p keeps its digits (y = e^(bx) / b, not 0). The threshold's own point (bx = t) takes
// the log form for y and y' and 0 for f'', as PyTorch's softplus_double_backward.
// Both sides are computed, then one is picked (as elu's): the loop vectorises.
// y' = s is written in the forward pass (derivative.h), so the backward is one multiply.
Tensor softplus(const Tensor& x, real beta, real threshold) {
  HEED_CHECK(beta != 0 && std::isfinite(beta), "softplus", "beta must be finite and nonzero, got ", beta);
  HEED_CHECK(!std::isnan(threshold), "softplus", "threshold must not be NaN");
  const auto f = [beta, threshold](real v) {
    const real bx = v * beta, soft = std::log1p(fastmath::exp(bx)) / beta;
    return bx > threshold ? v : soft;
  };
  const auto fd = [beta, threshold, &f](real v, real& d) {
    const real bx = v * beta, z = fastmath::exp(bx), s = z / (z + 1);
    d = bx > threshold ? real(1) : s;
    return f(v);
  };
  return map_recording_derivative("softplus", x, f, fd, [beta, threshold](real v) {
    const real bx = v * beta, z = fastmath::exp(bx), q = z / ((z + 1) * (z + 1));  // s (1 - s)
    return bx < threshold ? beta * q : real(0);
  });
}

// y = x t,  t = tanh(sp),  sp = log(1 + e^x)     dx = dy * (t + x s (1 - t^2)),  s = sigmoid(x)
//                                                 f'' = (1 - t^2) s (2 + x (1 - s) - 2 x s t)
// Mish (Misra 2019), PyTorch's forward: log1p(e^x) without a threshold; past x = 88 e^x is inf
// in float, t = tanh(inf) = 1 and y = x, as PyTorch's. s comes from fastmath::sigmoid (never
// e^x / (1 + e^x) = inf / inf), so y' = 1 there too. (t' = (1 - t^2) s, s' = s (1 - s).)
Tensor mish(const Tensor& x) {
  const auto f = [](real v) { return v * fastmath::tanh(std::log1p(fastmath::exp(v))); };
  const auto fd = [&f](real v, real& d) {
    const real t = fastmath::tanh(std::log1p(fastmath::exp(v))), s = fastmath::sigmoid(v);
    d = t + v * s * (1 - t * t);
    return f(v);
  };
  return map_recording_derivative("mish", x, f, fd, [](real v) {
    const real t = fastmath::tanh(std::log1p(fastmath::exp(v))), s = fastmath::sigmoid(v);
    return (1 - t * t) * s * (2 + v * (1 - s) - 2 * v * s * t);
  });
}

// y = x > 0 ? x : w x,  w (1) for every element, or (C) along dim 1 of x (N, C, ...)
// dx = dy * (x > 0 ? 1 : w)    dw = sum of dy * x where x <= 0 (over all but dim 1)
// Composed (where, mul), so its backward and double backward are the ops'; at x = 0 the
// gradient is w's side, as PyTorch's prelu_backward.
Tensor prelu(const Tensor& x, const Tensor& weight) {
  HEED_CHECK(x.defined() && weight.defined() && weight.dim() == 1, "prelu",
             "weight must be 1-D (1 or C slopes), got ", weight.shape());
  const int64_t n = weight.size(0);
  Tensor w = weight;  // (1), or (C) viewed as (1, C, 1, ...) to broadcast along dim 1
  if (n != 1) {
    HEED_CHECK(x.dim() >= 2 && x.size(1) == n, "prelu", "weight ", weight.shape(),
               " needs an input with ", n, " channels in dim 1, got ", x.shape());
    std::vector<int64_t> s(x.dim(), 1);
    s[1] = n;
    w = weight.reshape(Shape(s));
  }
  return named("prelu", where(gt(x, real(0)), x, mul(w, x)), {x, weight});
}

// y = |x|            dx = dy * sign(x)          (0 at x = 0, as PyTorch)
Tensor abs(const Tensor& x) {
  Tensor y = map(x, [](real v) { return std::abs(v); });
  return record("abs", y, {x}, kDoubleBackward, [x = SavedTensor(x)](const Tensor& dy, Grads& g) {
    if (g.create_graph())
      return void(g[0] = mul(dy, map(x, [](real v) { return v > 0 ? real(1) : v < 0 ? real(-1) : real(0); })));
    g[0] = zip("abs", dy, x, [](real d, real v) { return v > 0 ? d : v < 0 ? -d : real(0); });
  });
}

namespace {

// y = min(max(x, lo), hi)     dx = dy * (lo <= x <= hi)
// As PyTorch: the gradient passes at the boundaries too, lo > hi gives hi everywhere
// (and no gradient), NaN in x stays NaN (gradient 0), and a NaN bound makes every y NaN
// (gradient 0: x >= NaN is false). Written with selects, v < lo ? lo : v would keep v
// when lo is NaN, as std::max(v, lo) does, so the NaN bound is tested once, outside.
Tensor clamp_op(const char* op, const Tensor& x, real lo, real hi) {
  const bool nan_bound = std::isnan(lo) || std::isnan(hi);
  Tensor y = map(x, [lo, hi, nan_bound](real v) {
    const real m = v < lo ? lo : v;
    return nan_bound ? std::numeric_limits<real>::quiet_NaN() : m > hi ? hi : m;
  });
  return record(op, y, {x}, kDoubleBackward, [op, x = SavedTensor(x), lo, hi](const Tensor& dy, Grads& g) {
    if (g.create_graph())
      return void(g[0] = where(map(x, [lo, hi](real v) { return real(v >= lo && v <= hi); }), dy, scalar_tensor(0)));
    g[0] = zip(op, dy, x, [lo, hi](real d, real v) { return v >= lo && v <= hi ? d : real(0); });
  });
}

}  // namespace

Tensor clamp(const Tensor& x, real lo, real hi) { return clamp_op("clamp", x, lo, hi); }

Tensor clamp_min(const Tensor& x, real lo) {
  return clamp_op("clamp_min", x, lo, std::numeric_limits<real>::infinity());
}

Tensor clamp_max(const Tensor& x, real hi) {
  return clamp_op("clamp_max", x, -std::numeric_limits<real>::infinity(), hi);
}

}  // namespace heed
