// pow.cpp - pow with a tensor exponent (pow.h): forward, backward, and the create_graph
// backward composed from recorded ops.
#include "pow.h"

#include <cmath>

#include "../../core/elementwise.h"
#include "../engine/node.h"
#include "arith.h"
#include "broadcast.h"
#include "compare.h"
#include "unary.h"

namespace heed {

// y = x^p            dx = dy * p * x^(p-1),  0 where p = 0
//                    dp = dy * y * log(x),   0 where x = 0 and p >= 0
// As PyTorch: where p = 0, y = 1 whatever x, so dx = 0 (not 0 * 0^-1 = NaN); at x = 0 with
// p >= 0, dp is the limit 0 of y log x (not 1 * log 0 = -inf at p = 0, 0 * -inf = NaN
// above). x < 0 gives dp = NaN (log of a negative number), as there.
// Under create_graph the same formulas are built from recorded ops, the masks above kept as
// constants (their derivative is 0 where they are not undefined).
Tensor pow(const Tensor& x, const Tensor& p) {
  Tensor y = zip("pow", x, p, [](real u, real v) { return real(std::pow(u, v)); });
  return record("pow", y, {x, p}, kDoubleBackward, [x = SavedTensor(x), p = SavedTensor(p),
                                   y = SavedTensor(y.detach())](const Tensor& dy, Grads& g) {
    if (g.create_graph()) {
      if (g.needs(0)) {  // dy * p * x^(p-1), 0 where p = 0: there x is read as 1 (0 * 1^-1 = 0, not 0 * 0^-1)
        const Tensor xs = masked_fill(x, zip("pow", x, p, [](real, real v) { return real(v == 0); }), 1);
        g[0] = sum_to(mul(dy, mul(p, pow(xs, add(p, -1)))), x.shape());
      }
      if (g.needs(1)) {  // dy * y * log(x), 0 where x = 0 and p >= 0
        const Tensor limit = zip("pow", x, p, [](real u, real v) { return real(u == 0 && v >= 0); });
        const Tensor lx = log(add(x, limit));  // log 1 = 0 where the limit applies
        g[1] = sum_to(mul(dy, mul(g.output(y), lx)), p.shape());
      }
      return;
    }
    if (g.needs(0)) {
      Tensor d = zip("pow", x, p, [](real u, real v) {
        return v == 0 ? real(0) : v * real(std::pow(u, v - 1));
      });
      g[0] = sum_to(mul(dy, d), x.shape());
    }
    if (g.needs(1)) {
      // log x, or 0 where x = 0 and p >= 0 (y is then 0 or 1, so y * 0 = 0: the limit)
      const Tensor lx = zip("pow", x, p, [](real u, real v) {
        return u == 0 && v >= 0 ? real(0) : real(std::log(u));
      });
      g[1] = sum_to(mul(dy, mul(y, lx)), p.shape());
    }
  });
}

}  // namespace heed
