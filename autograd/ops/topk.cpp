// topk.cpp - which k entries (a partial sort of each line's indices, no gradient), then
// their values through gather, whose backward scatters the gradient back (indexing.cpp).
#include "topk.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "../../core/error.h"
#include "../../core/parallel.h"
#include "../engine/node.h"
#include "shape.h"

namespace heed {

ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  HEED_CHECK(x.dim() > 0, "topk", "cannot take the top k of a 0-dim tensor");
  const Shape& s = x.shape();
  const int d = wrap_dim("topk", dim, x.dim());
  const int64_t n = s[d];
  HEED_CHECK(k >= 0 && k <= n, "topk", "k ", k, " is out of range for dim ", dim, " of shape ", s,
             " (size ", n, ")");
  // x seen as (outer, n, inner): line (o, i) holds x[o, j, i] for j < n, `inner` apart
  const int64_t outer = dims_product(s, 0, d), inner = dims_product(s, d + 1, s.size());
  Shape out = s;
  out[d] = k;
  std::vector<int64_t> ids(out.numel());  // (.., k, ..)
  const real* px = x.data();
  parallel_for(outer * inner, kGrainElementwise / (n + 1) + 1, [&](int64_t b, int64_t e) {
    std::vector<int64_t> order(n);
    for (int64_t line = b; line < e; ++line) {
      const int64_t o = line / inner, i = line % inner;
      const real* xl = px + o * n * inner + i;  // x[o, j, i] = xl[j * inner]
      // a > c in value, NaN above every number
      const auto greater = [&](int64_t a, int64_t c) {
        const real va = xl[a * inner], vc = xl[c * inner];
        return std::isnan(va) ? !std::isnan(vc) : va > vc;
      };
      // a comes before c: the better value, or on a tie the lower index
      const auto before = [&](int64_t a, int64_t c) {
        if (largest ? greater(a, c) : greater(c, a)) return true;
        if (largest ? greater(c, a) : greater(a, c)) return false;
        return a < c;
      };
      std::iota(order.begin(), order.end(), int64_t{0});
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t j = 0; j < k; ++j) ids[(o * k + j) * inner + i] = order[j];
    }
  });
  (void)sorted;  // always sorted (allowed: torch leaves the order unspecified otherwise)
  IndexTensor indices(std::move(ids), out);
  return {named("topk", gather(x, d, indices), {x}), indices};
}

}  // namespace heed
