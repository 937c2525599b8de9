// indexing.cpp - index_select and gather: copies chosen by integer ids. Embeddings are an
// index_select of rows of a (V, C) table; cross-entropy gathers one log-probability per row.
//
// Both read x through ids, so both backwards scatter-add: dx starts at zero and each dy
// element is added back where it was read from. Ids may repeat (a token twice in a batch),
// so the work is split so that no two threads ever add into the same element of dx, and
// each element receives its additions in a fixed order (the result is deterministic).
#include "indexing.h"

#include <algorithm>
#include <cstring>

#include "../../core/error.h"
#include "../../core/parallel.h"
#include "../engine/node.h"

namespace heed {

// ---------------------------------------------------------------- index_select

namespace {  // file-local
// A tensor seen as (outer, n, inner) around dim d: outer = prod(shape[:d]), n = shape[d],
// inner = prod(shape[d+1:]).
struct Around {
  int64_t outer, n, inner;
};
}  // namespace

static Around around(const Shape& s, int d) {
  return {dims_product(s, 0, d), s[d], dims_product(s, d + 1, s.size())};
}

// dx[o, id[i], c] += dy[o, i, c] for i = 0..m-1 in order; dx as (outer, n, inner), dy as
// (outer, m, inner). Threads split the (o, c) columns of dx, so repeated ids add up in one
// thread: race-free. Accumulates (+=) into dx.
static void index_add(real* dx, const real* dy, const int64_t* id, int64_t m, const Around& a) {
  parallel_for(a.outer * a.inner, kGrainElementwise / (m + 1) + 1, [&](int64_t b, int64_t e) {
    for (int64_t oc = b; oc < e;) {  // columns [b, e) of the flattened (outer, inner) grid
      const int64_t o = oc / a.inner, c0 = oc % a.inner, c1 = std::min(a.inner, c0 + (e - oc));
      for (int64_t i = 0; i < m; ++i) {
        real* to = dx + (o * a.n + id[i]) * a.inner;
        const real* from = dy + (o * m + i) * a.inner;
        for (int64_t c = c0; c < c1; ++c) to[c] += from[c];
      }
      oc += c1 - c0;
    }
  });
}

// index_select's backward as a recorded op (so a create_graph pass can differentiate it):
// y = zeros(xs), dy's slices added at index along d                dx = index_select(dy)
static Tensor index_select_backward(const Tensor& dy, const Shape& xs, int d, const IndexTensor& index) {
  Tensor dx = zeros(xs);
  index_add(dx.data(), dy.data(), index.data(), index.numel(), around(xs, d));
  return record("index_select_backward", dx, {dy}, kDoubleBackward, [d, index](const Tensor& ddx, Grads& g) {
    g[0] = index_select(ddx, d, index);
  });
}

// y[o, i, c] = x[o, index[i], c]     (x as (outer, n, inner) around dim; y: n -> index.numel())
// dx[o, index[i], c] += dy[o, i, c]  (repeated ids add up)
Tensor index_select(const Tensor& x, int64_t dim, const IndexTensor& index) {
  HEED_CHECK(x.dim() > 0, "index_select", "cannot index a 0-dim tensor");
  const int d = wrap_dim("index_select", dim, x.dim());
  HEED_CHECK(index.dim() == 1, "index_select", "index must be 1-D, got shape ", index.shape());
  index.check_range("index_select", x.shape()[d]);
  const Around a = around(x.shape(), d);
  const int64_t m = index.numel();
  Shape ys = x.shape();
  ys[d] = m;
  Tensor y = empty(ys);
  const real* px = x.data();
  real* py = y.data();
  const int64_t* id = index.data();
  // one memcpy per row of `inner` elements (a whole embedding vector when dim is 0)
  parallel_for(a.outer * m, kGrainElementwise / (a.inner + 1) + 1, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t o = r / m, i = r % m;
      std::memcpy(py + r * a.inner, px + (o * a.n + id[i]) * a.inner, sizeof(real) * a.inner);
    }
  });
  return record("index_select", y, {x}, kDoubleBackward, [xs = x.shape(), d, index](const Tensor& dy, Grads& g) {
    g[0] = index_select_backward(dy, xs, d, index);
  });
}

// ---------------------------------------------------------------- gather

// Calls f(p, q) for every element p in rows [rb, re) of `index` (a row: all dims but the
// last), where q is the offset in x that p reads: p's coordinates with coordinate d replaced
// by index[p]. `xst` are x's strides; index.size(k) <= x.size(k) for k != d.
template <class F>
static void for_each_gathered(const IndexTensor& index, const Shape& xst, int d, int64_t rb,
                              int64_t re, const F& f) {
  const Shape& is = index.shape();
  const int last = is.size() - 1;
  const int64_t cols = is[last];
  const int64_t col_step = d == last ? 0 : xst[last];  // when d is last, the id is the column
  const int64_t* id = index.data();
  for (int64_t row = rb; row < re; ++row) {
    int64_t base = 0, rem = row;
    for (int k = last - 1; k >= 0; --k) {
      const int64_t i = rem % is[k];
      rem /= is[k];
      if (k != d) base += i * xst[k];
    }
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t p = row * cols + j;
      f(p, base + j * col_step + id[p] * xst[d]);
    }
  }
}

// dx[p with coordinate d replaced by index[p]] += dy[p] for every element p of index.
// Elements that differ in a coordinate before d never reach the same element of dx, so the
// rows of index are split into groups by those leading coordinates, one group per task;
// inside a group the additions run in order. Accumulates (+=) into dx.
static void gather_add(real* dx, const real* dy, const IndexTensor& index, const Shape& xs,
                       int d) {
  if (index.numel() == 0) return;
  const Shape& is = index.shape();
  int64_t groups = 1;
  for (int k = 0; k < d; ++k) groups *= is[k];
  const int64_t cols = is[is.size() - 1], per_group = index.numel() / cols / groups;
  const Shape xst = contiguous_strides(xs);
  parallel_for(groups, kGrainElementwise / (per_group * cols + 1) + 1, [&](int64_t b, int64_t e) {
    for_each_gathered(index, xst, d, b * per_group, e * per_group,
                      [&](int64_t p, int64_t q) { dx[q] += dy[p]; });
  });
}

// gather's backward as a recorded op (so a create_graph pass can differentiate it):
// y = zeros(xs), dy[p] added at p with coordinate d replaced by index[p]     dx = gather(dy)
static Tensor gather_backward(const Tensor& dy, const Shape& xs, int d, const IndexTensor& index) {
  Tensor dx = zeros(xs);
  gather_add(dx.data(), dy.data(), index, xs, d);
  return record("gather_backward", dx, {dy}, kDoubleBackward, [d, index](const Tensor& ddx, Grads& g) {
    g[0] = gather(ddx, d, index);
  });
}

// y[p] = x[p with coordinate dim replaced by index[p]]      y.shape = index.shape
// dx[p with coordinate dim replaced by index[p]] += dy[p]   (repeated targets add up)
Tensor gather(const Tensor& x, int64_t dim, const IndexTensor& index) {
  HEED_CHECK(x.dim() > 0, "gather", "cannot gather from a 0-dim tensor");
  const int d = wrap_dim("gather", dim, x.dim());
  bool fits = index.dim() == x.dim();
  for (int k = 0; fits && k < x.dim(); ++k) fits = k == d || index.shape()[k] <= x.shape()[k];
  HEED_CHECK(fits, "gather", "index shape ", index.shape(), " does not fit x shape ", x.shape(),
             " (same rank, and no larger outside dim ", dim, ")");
  index.check_range("gather", x.shape()[d]);
  Tensor y = empty(index.shape());
  const Shape xst = contiguous_strides(x.shape());
  const int64_t cols = index.shape()[index.dim() - 1];
  const int64_t rows = cols == 0 ? 0 : index.numel() / cols;
  const real* px = x.data();
  real* py = y.data();
  parallel_for(rows, kGrainElementwise / (cols + 1) + 1, [&](int64_t b, int64_t e) {
    for_each_gathered(index, xst, d, b, e, [&](int64_t p, int64_t q) { py[p] = px[q]; });
  });
  return record("gather", y, {x}, kDoubleBackward, [xs = x.shape(), d, index](const Tensor& dy, Grads& g) {
    g[0] = gather_backward(dy, xs, d, index);
  });
}

}  // namespace heed
