// dropout.cpp - inverted dropout.
//
//   y = x * s          s_i = m_i / (1 - p),  m_i ~ Bernoulli(1 - p)
//   dx = dy * s        (the same scaled mask, saved from the forward pass)
#include "dropout.h"

#include "../../core/elementwise.h"
#include "../../core/error.h"
#include "../../core/random.h"
#include "../engine/node.h"
#include "arith.h"

namespace heed {

Tensor dropout(const Tensor& x, double p, bool training) {
  HEED_CHECK(p >= 0 && p < 1, "dropout", "p must be in [0, 1); got ", p);
  if (!training || p == 0) return x;

  // The mask is drawn serially, one uniform per element in order, so a seed fixes it.
  Tensor s = empty(x.shape());  // scaled mask, x.shape
  real* ps = s.data();
  const real keep = real(1 / (1 - p));
  {
    Draws d;  // the generator's lock, for the mask only
    for (int64_t i = 0; i < s.numel(); ++i) ps[i] = d.uniform() < 1 - p ? keep : real(0);
  }

  Tensor y = zip("dropout", x, s, [](real v, real m) { return v * m; });
  return record("dropout", y, {x}, kDoubleBackward, [s](const Tensor& dy, Grads& g) {
    if (g.create_graph()) return void(g[0] = mul(dy, s));  // s a constant
    g[0] = zip("dropout", dy, s, [](real d, real m) { return d * m; });
  });
}

}  // namespace heed
