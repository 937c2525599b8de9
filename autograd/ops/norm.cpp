// norm.cpp - p-norms over dims, all and any (norm.h).
//
// One walk over x reduces any set of dims: each element of x adds into the output element
// its kept dims address (out_offset below), accumulating in double. The backward is written
// with heed ops, from the saved norm reshaped to keepdim form (nk) so that it broadcasts:
//   p = 2        dx = dy * x / n                      (0 where n = 0)
//   p = 1        dx = dy * sign(x)
//   p = +-inf    dx = dy * sign(x) * [|x| = n] / #{k : |x_k| = n}
//   other p      dx = dy * x |x|^(p-2) / n^(p-1)      (0 where n = 0 or x = 0)
//   p = 0        dx = 0
#include "norm.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "../../core/elementwise.h"
#include "../../core/error.h"
#include "../engine/node.h"
#include "arith.h"
#include "compare.h"
#include "reduce.h"
#include "unary.h"

namespace heed {

namespace {

// Which dims are reduced, the output's shape with them kept as 1 (kept) and as given.
struct Reduced {
  bool dim[kMaxDims] = {};
  Shape kept, out;
  int64_t count = 1;  // elements reduced into each output element
};

Reduced plan(const char* op, const Shape& s, const std::vector<int64_t>& dims, bool keepdim) {
  Reduced r;
  for (int64_t d : dims) {
    const int w = wrap_dim(op, d, s.size() == 0 ? 1 : s.size());
    HEED_CHECK(!r.dim[w], op, "dim ", d, " appears more than once in the dims of shape ", s);
    r.dim[w] = true;
  }
  if (dims.empty())
    for (int d = 0; d < kMaxDims; ++d) r.dim[d] = true;
  for (int d = 0; d < s.size(); ++d) {
    r.kept.push_back(r.dim[d] ? 1 : s[d]);
    if (r.dim[d]) r.count *= s[d];
    if (!r.dim[d] || keepdim) r.out.push_back(r.dim[d] ? 1 : s[d]);
  }
  return r;
}

// fold(acc, v) for each x element into acc[the output element it reduces into], acc starting
// at init; out = finish(acc). Serial: a norm is read once per step, not in a hot loop.
template <class Fold, class Finish>
Tensor reduce_walk(const Tensor& x, const Reduced& r, double init, Fold fold, Finish finish) {
  const Shape& s = x.shape();
  const Shape ks = contiguous_strides(r.kept);
  std::vector<double> acc(r.kept.numel(), init);
  int64_t idx[kMaxDims] = {}, off = 0;
  const real* px = x.data();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    acc[off] = fold(acc[off], double(px[i]));
    for (int d = s.size() - 1; d >= 0; --d) {  // next index; off follows the kept dims
      const int64_t step = r.dim[d] ? 0 : ks[d];
      if (++idx[d] < s[d]) {
        off += step;
        break;
      }
      off -= step * (s[d] - 1);
      idx[d] = 0;
    }
  }
  Tensor y = empty(r.out);
  for (int64_t k = 0; k < y.numel(); ++k) y.data()[k] = real(finish(acc[k]));
  return y;
}

Tensor sign_of(const Tensor& x) {
  return map(x, [](real v) { return real(v > 0) - real(v < 0); });
}

// sum over the reduced dims, keeping them (the count of ties for the inf norms)
Tensor sum_kept(Tensor t, const Reduced& r) {
  for (int d = 0; d < t.dim(); ++d)
    if (r.dim[d]) t = sum(t, d, /*keepdim=*/true);
  return t;
}

}  // namespace

Tensor norm(const Tensor& x, double p, const std::vector<int64_t>& dims, bool keepdim) {
  const char* op = "norm";
  HEED_CHECK(!std::isnan(p) && (p >= 0 || p == -std::numeric_limits<double>::infinity()), op,
             "p must be >= 0, inf or -inf; got ", p);
  const Reduced r = plan(op, x.shape(), dims, keepdim);
  const bool inf = std::isinf(p);
  HEED_CHECK(!inf || r.count > 0 || r.kept.numel() == 0, op, "the ", p,
             "-norm of an empty dim is undefined (shape ", x.shape(), ")");
  Tensor y;
  if (p == 2) {
    y = reduce_walk(x, r, 0, [](double a, double v) { return a + v * v; },
                    [](double a) { return std::sqrt(a); });
  } else if (p == 1) {
    y = reduce_walk(x, r, 0, [](double a, double v) { return a + std::fabs(v); },
                    [](double a) { return a; });
  } else if (p == 0) {
    y = reduce_walk(x, r, 0, [](double a, double v) { return a + (v != 0); },
                    [](double a) { return a; });
  } else if (inf) {  // NaN wins, as in torch
    const double sgn = p > 0 ? 1 : -1;
    y = reduce_walk(x, r, p > 0 ? 0 : std::numeric_limits<double>::infinity(),
                    [sgn](double a, double v) {
                      const double m = std::fabs(v);
                      return std::isnan(m) || sgn * m > sgn * a ? m : a;
                    },
                    [](double a) { return a; });
  } else {
    y = reduce_walk(x, r, 0, [p](double a, double v) { return a + std::pow(std::fabs(v), p); },
                    [p](double a) { return std::pow(a, 1 / p); });
  }
  return record(op, y, {x}, kDoubleBackward, [x = SavedTensor(x), n = SavedTensor(y.detach()), r, p, inf](
                                const Tensor& dy, Grads& g) {
    // Written in heed ops, so differentiable again; under create_graph the norm is read
    // through its node (g.output), so the second derivative sees its dependence on x.
    const Tensor nn = g.create_graph() ? g.output(n) : Tensor(n);
    const Tensor dyk = dy.reshape(r.kept), nk = nn.reshape(r.kept);  // kept dims of size 1
    if (p == 0) {
      g[0] = zeros_like(x);
    } else if (p == 1) {
      g[0] = sign_of(x) * dyk;
    } else if (inf) {
      const Tensor at = eq(abs(x), nk);  // 0/1: the entries attaining the extreme
      g[0] = sign_of(x) * at * (dyk / sum_kept(at, r));
    } else if (p == 2) {
      g[0] = x * masked_fill(dyk / nk, eq(nk, 0), 0);
    } else {
      Tensor dx = x * pow(abs(x), real(p - 2)) * masked_fill(dyk / pow(nk, real(p - 1)), eq(nk, 0), 0);
      g[0] = p < 2 ? masked_fill(dx, eq(x, 0), 0) : dx;
    }
  });
}

Tensor norm(const Tensor& x, double p) { return norm(x, p, std::vector<int64_t>{}, false); }
Tensor norm(const Tensor& x, double p, int64_t dim, bool keepdim) {
  return norm(x, p, std::vector<int64_t>{dim}, keepdim);
}

// y = 1 if every (some) x_k != 0 over the reduced dims, else 0      (not differentiable)
Tensor all(const Tensor& x) {
  return reduce_walk(x, plan("all", x.shape(), {}, false), 1,
                     [](double a, double v) { return double(a != 0 && v != 0); },
                     [](double a) { return a; });
}
Tensor all(const Tensor& x, int64_t dim, bool keepdim) {
  return reduce_walk(x, plan("all", x.shape(), {dim}, keepdim), 1,
                     [](double a, double v) { return double(a != 0 && v != 0); },
                     [](double a) { return a; });
}
Tensor any(const Tensor& x) {
  return reduce_walk(x, plan("any", x.shape(), {}, false), 0,
                     [](double a, double v) { return double(a != 0 || v != 0); },
                     [](double a) { return a; });
}
Tensor any(const Tensor& x, int64_t dim, bool keepdim) {
  return reduce_walk(x, plan("any", x.shape(), {dim}, keepdim), 0,
                     [](double a, double v) { return double(a != 0 || v != 0); },
                     [](double a) { return a; });
}

}  // namespace heed
