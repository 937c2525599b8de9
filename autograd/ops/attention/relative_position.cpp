// relative_position.cpp - gather_buckets and scatter_buckets, each the other's backward.
//
//   gather   y[n, i, j] = p[n, i, bucket(i, j)]                  dp = scatter(dy)
//   scatter  y[n, i, r] = sum_{j: bucket(i, j) = r} a[n, i, j]    da = gather(dy)
// n runs over the leading dims folded together. A row i is handled by one thread, so the
// scatter's += never races.
#include "relative_position.h"

#include <algorithm>

#include "../../../core/error.h"
#include "../../../core/parallel.h"
#include "../../engine/node.h"

namespace heed {

RelativeBuckets relative_buckets(int64_t Tq, int64_t Tk, int64_t k) {
  HEED_CHECK(Tq >= 1 && Tk >= 1 && k >= 0, "relative_buckets", "need Tq >= 1, Tk >= 1 and "
             "max_relative_position k >= 0; got Tq = ", Tq, ", Tk = ", Tk, ", k = ", k);
  RelativeBuckets b;
  b.Tq = Tq;
  b.Tk = Tk;
  b.k = k;
  b.lo = std::max(-k, -(Tk - 1));
  b.hi = std::min(k, Tq - 1);
  return b;
}

// Raw kernels over N rows-of-queries blocks. gather writes y (N, Tq, Tk); scatter
// accumulates into y (N, Tq, R), which the caller has zeroed (+=).
static void gather_kernel(const real* p, real* y, int64_t N, const RelativeBuckets& b) {
  const int64_t Tq = b.Tq, Tk = b.Tk, R = b.count();
  parallel_for(N * Tq, kGrainElementwise / (Tk + 1) + 1, [&](int64_t s, int64_t e) {
    for (int64_t ni = s; ni < e; ++ni) {
      const int64_t i = ni % Tq;
      const real* prow = p + ni * R;
      real* yrow = y + ni * Tk;
      for (int64_t j = 0; j < Tk; ++j) yrow[j] = prow[b.bucket(i, j)];
    }
  });
}

static void scatter_kernel(const real* a, real* y, int64_t N, const RelativeBuckets& b) {
  const int64_t Tq = b.Tq, Tk = b.Tk, R = b.count();
  parallel_for(N * Tq, kGrainElementwise / (Tk + 1) + 1, [&](int64_t s, int64_t e) {
    for (int64_t ni = s; ni < e; ++ni) {
      const int64_t i = ni % Tq;
      const real* arow = a + ni * Tk;
      real* yrow = y + ni * R;
      for (int64_t j = 0; j < Tk; ++j) yrow[b.bucket(i, j)] += arow[j];
    }
  });
}

// x's shape with the last dim replaced by n.
static Shape with_last(const Shape& s, int64_t n) {
  Shape out = s;
  out[out.size() - 1] = n;
  return out;
}

static int64_t leading(const char* op, const Tensor& x, const RelativeBuckets& b, int64_t last) {
  HEED_CHECK(x.dim() >= 2 && x.size(-2) == b.Tq && x.size(-1) == last, op, "expected (..., ",
             b.Tq, ", ", last, ") for Tq = ", b.Tq, ", Tk = ", b.Tk, ", k = ", b.k, "; got ",
             x.shape());
  return x.numel() / (b.Tq * last);
}

Tensor gather_buckets(const Tensor& p, const RelativeBuckets& b) {
  const int64_t N = leading("gather_buckets", p, b, b.count());
  Tensor y = empty(with_last(p.shape(), b.Tk));  // (.., Tq, Tk)
  gather_kernel(p.data(), y.data(), N, b);
  return record("gather_buckets", y, {p}, kDoubleBackward, [b, N, ps = p.shape()](const Tensor& dy, Grads& g) {
    if (g.create_graph()) return void(g[0] = scatter_buckets(dy, b));  // the adjoint, recorded
    Tensor dp = zeros(ps);  // (.., Tq, R)
    scatter_kernel(dy.data(), dp.data(), N, b);
    g[0] = dp;
  });
}

Tensor scatter_buckets(const Tensor& a, const RelativeBuckets& b) {
  const int64_t N = leading("scatter_buckets", a, b, b.Tk);
  Tensor y = zeros(with_last(a.shape(), b.count()));  // (.., Tq, R)
  scatter_kernel(a.data(), y.data(), N, b);
  return record("scatter_buckets", y, {a}, kDoubleBackward, [b, N, as = a.shape()](const Tensor& dy, Grads& g) {
    if (g.create_graph()) return void(g[0] = gather_buckets(dy, b));  // the adjoint, recorded
    Tensor da = empty(as);  // (.., Tq, Tk)
    gather_kernel(dy.data(), da.data(), N, b);
    g[0] = da;
  });
}

}  // namespace heed
