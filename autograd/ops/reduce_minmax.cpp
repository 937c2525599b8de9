// reduce_minmax.cpp - max, min, argmax, argmin and var, over all elements or one dim.
//
// Over one dim, x is seen as (outer, n, inner) (reduce_util.h) and out[o, i] reduces the
// row x[o, :, i]. Semantics follow PyTorch:
//   ties   the index is the first occurrence of the extreme, and the gradient of max/min
//          flows to that one position. (Over all elements PyTorch splits it evenly among
//          ties; heed sends all of it to the first occurrence, also a valid subgradient.)
//   NaN    propagates: a NaN among the reduced elements makes max/min NaN, and its index
//          is the first NaN's.
//   empty  reducing zero elements throws heed::Error naming the op and the shape; so does
//          unbiased var of a single element, which divides by n - 1 = 0 (PyTorch: NaN).
#include "reduce_minmax.h"

#include <cmath>
#include <vector>

#include "../../core/elementwise.h"
#include "../../core/error.h"
#include "../engine/node.h"
#include "arith.h"
#include "broadcast.h"
#include "compare.h"
#include "reduce.h"
#include "reduce_util.h"

namespace heed {

namespace {

using detail::reduced_shape;
using detail::Split;
using detail::split_at;

// better(v, best): v replaces the best so far. Strictly better, so the first occurrence
// wins a tie; NaN beats any number, and once the best is NaN nothing replaces it.
struct Greater {
  bool operator()(real v, real best) const {
    return v > best || (std::isnan(v) && !std::isnan(best));
  }
};
struct Less {
  bool operator()(real v, real best) const {
    return v < best || (std::isnan(v) && !std::isnan(best));
  }
};

// The index of the extreme of x[0, n), n > 0 (no graph). Blocks are scanned in parallel
// and their winners compared in order, so the first occurrence still wins.
template <class Better>
int64_t extreme_index_all(const real* x, int64_t n, Better better) {
  const int64_t block = kGrainElementwise, blocks = (n + block - 1) / block;
  std::vector<int64_t> winner(blocks);
  parallel_for(blocks, 2, [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; ++j) {
      const int64_t lo = j * block, hi = lo + block < n ? lo + block : n;
      int64_t w = lo;
      for (int64_t i = lo + 1; i < hi; ++i)
        if (better(x[i], x[w])) w = i;
      winner[j] = w;
    }
  });
  int64_t w = winner[0];
  for (int64_t j = 1; j < blocks; ++j)
    if (better(x[winner[j]], x[w])) w = winner[j];
  return w;
}

// values[o, i] = x[o, k*, i],  indices[o, i] = k*,  k* = the first k where x[o, k, i] is
// the extreme of the row (no graph). Writes values and indices, both (outer, inner).
template <class Better>
void extreme_dim_forward(real* values, int64_t* indices, const real* x, const Split& sp,
                         Better better) {
  const int64_t n = sp.n, inner = sp.inner;
  if (sp.outer * inner == 0) return;  // no rows
  if (inner == 1) {  // contiguous rows: one scan per row
    parallel_for(sp.outer, kGrainElementwise / (n + 1) + 1, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const real* row = x + o * n;
        int64_t w = 0;
        for (int64_t k = 1; k < n; ++k)
          if (better(row[k], row[w])) w = k;
        values[o] = row[w];
        indices[o] = w;
      }
    });
  } else {  // compare whole rows of length inner against the best so far; parallel over (o, i-chunk)
    const int64_t chunk = inner < 256 ? inner : 256, chunks = (inner + chunk - 1) / chunk;
    parallel_for(sp.outer * chunks, kGrainElementwise / (n * chunk) + 1, [&](int64_t b, int64_t e) {
      for (int64_t w = b; w < e; ++w) {
        const int64_t o = w / chunks, i0 = (w % chunks) * chunk;
        const int64_t i1 = i0 + chunk < inner ? i0 + chunk : inner;
        const real* base = x + o * n * inner;  // x[o, 0, 0]
        real* val = values + o * inner;
        int64_t* idx = indices + o * inner;
        for (int64_t i = i0; i < i1; ++i) {
          val[i] = base[i];
          idx[i] = 0;
        }
        for (int64_t k = 1; k < n; ++k) {
          const real* row = base + k * inner;  // x[o, k, :]
          for (int64_t i = i0; i < i1; ++i)
            if (better(row[i], val[i])) {
              val[i] = row[i];
              idx[i] = k;
            }
        }
      }
    });
  }
}

// dx[o, indices[o, i], i] += dy[o, i]      (dx: (outer, n, inner); dy, indices: (outer, inner))
void extreme_dim_backward(real* dx, const real* dy, const int64_t* indices, const Split& sp) {
  parallel_for(sp.outer * sp.inner, kGrainElementwise, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t o = r / sp.inner, i = r % sp.inner;
      dx[(o * sp.n + indices[r]) * sp.inner + i] += dy[r];
    }
  });
}

// max/min over all elements; `op` names it in errors and in the graph.
template <class Better>
Tensor extreme_all(const char* op, const Tensor& x, Better better) {
  HEED_CHECK(x.numel() > 0, op, "cannot reduce an empty tensor of shape ", x.shape());
  const int64_t at = extreme_index_all(x.data(), x.numel(), better);
  Tensor y = scalar_tensor(x.data()[at]);
  return record(op, y, {x}, kDoubleBackward, [s = x.shape(), at](const Tensor& dy, Grads& g) {
    Tensor dx = zeros(s);
    if (g.create_graph()) {  // dy where the one-hot is 1, recorded
      dx.data()[at] = 1;
      return void(g[0] = where(dx, expand(dy, s), scalar_tensor(0)));
    }
    dx.data()[at] = dy.item();
    g[0] = dx;
  });
}

// values and indices over one dim, without recording (max/min record; argmax/argmin do not).
template <class Better>
ValuesIndices extreme_dim_raw(const char* op, const Tensor& x, int64_t dim, bool keepdim,
                              Better better) {
  const int d = wrap_dim(op, dim, x.dim());
  const Split sp = split_at(x.shape(), d);
  HEED_CHECK(sp.n > 0, op, "cannot reduce dim ", dim, " of size 0 (shape ", x.shape(), ")");
  const Shape out = reduced_shape(x.shape(), d, keepdim);
  ValuesIndices r{empty(out), IndexTensor(std::vector<int64_t>(out.numel()), out)};
  extreme_dim_forward(r.values.data(), r.indices.data(), x.data(), sp, better);
  return r;
}

template <class Better>
ValuesIndices extreme_dim(const char* op, const Tensor& x, int64_t dim, bool keepdim,
                          Better better) {
  ValuesIndices r = extreme_dim_raw(op, x, dim, keepdim, better);
  const Split sp = split_at(x.shape(), wrap_dim(op, dim, x.dim()));
  record(op, r.values, {x}, kDoubleBackward, [s = x.shape(), sp, idx = r.indices](const Tensor& dy, Grads& g) {
    Tensor dx = zeros(s);
    if (g.create_graph()) {  // dy broadcast along the dim, times the one-hot of the indices
      extreme_dim_backward(dx.data(), ones(dy.shape()).data(), idx.data(), sp);
      const Tensor spread = expand(dy.reshape({sp.outer, 1, sp.inner}), {sp.outer, sp.n, sp.inner});
      return void(g[0] = where(dx, spread.reshape(s), scalar_tensor(0)));
    }
    extreme_dim_backward(dx.data(), dy.data(), idx.data(), sp);
    g[0] = dx;
  });
  return r;
}

// mean[o, i] = sum_k x[o, k, i] / n
// y[o, i]    = sum_k (x[o, k, i] - mean[o, i])^2 / (n - c)
// Writes mean and y, both (outer, inner); x: (outer, n, inner). Two passes in double, by
// chunks of columns (one column when inner == 1) so the innermost loop is contiguous.
void var_dim_forward(real* y, real* mean, const real* x, const Split& sp, int64_t c) {
  const int64_t n = sp.n, inner = sp.inner;
  if (sp.outer * inner == 0) return;  // no rows
  constexpr int64_t kChunk = 256;
  const int64_t chunk = inner < kChunk ? inner : kChunk, chunks = (inner + chunk - 1) / chunk;
  parallel_for(sp.outer * chunks, kGrainElementwise / (n * chunk + 1) + 1, [&](int64_t b, int64_t e) {
    double acc[kChunk], m[kChunk];
    for (int64_t w = b; w < e; ++w) {
      const int64_t o = w / chunks, i0 = (w % chunks) * chunk;
      const int64_t len = i0 + chunk < inner ? chunk : inner - i0;
      const real* base = x + o * n * inner + i0;  // x[o, 0, i0]
      for (int64_t j = 0; j < len; ++j) acc[j] = 0;
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < len; ++j) acc[j] += base[k * inner + j];
      for (int64_t j = 0; j < len; ++j) {
        m[j] = acc[j] / double(n);
        acc[j] = 0;
      }
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < len; ++j) {
          const double dev = base[k * inner + j] - m[j];
          acc[j] += dev * dev;
        }
      for (int64_t j = 0; j < len; ++j) {
        mean[o * inner + i0 + j] = real(m[j]);
        y[o * inner + i0 + j] = real(acc[j] / double(n - c));
      }
    }
  });
}

// dx[o, k, i] += dy[o, i] * 2 (x[o, k, i] - mean[o, i]) / (n - c)
void var_dim_backward(real* dx, const real* dy, const real* x, const real* mean, const Split& sp,
                      int64_t c) {
  const int64_t n = sp.n, inner = sp.inner;
  const real scale = real(2) / real(n - c);
  parallel_for(sp.outer * n, kGrainElementwise / (inner + 1) + 1, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {  // row r = (o, k)
      const int64_t o = r / n;
      const real *xr = x + r * inner, *mr = mean + o * inner, *dyr = dy + o * inner;
      real* dxr = dx + r * inner;
      for (int64_t i = 0; i < inner; ++i) dxr[i] += dyr[i] * scale * (xr[i] - mr[i]);
    }
  });
}

}  // namespace

// y = max_i x_i                  dx_i = dy where i is the first argmax, else 0
Tensor max(const Tensor& x) { return extreme_all("max", x, Greater()); }

// y = min_i x_i                  dx_i = dy where i is the first argmin, else 0
Tensor min(const Tensor& x) { return extreme_all("min", x, Less()); }

// y[o, i] = max_k x[o, k, i]      dx[o, k, i] = dy[o, i] if k == indices[o, i], else 0
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_dim("max", x, dim, keepdim, Greater());
}

// y[o, i] = min_k x[o, k, i]      dx[o, k, i] = dy[o, i] if k == indices[o, i], else 0
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_dim("min", x, dim, keepdim, Less());
}

// indices[o, i] = first k maximising x[o, k, i]     (not differentiable)
IndexTensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_dim_raw("argmax", x, dim, keepdim, Greater()).indices;
}

// indices[o, i] = first k minimising x[o, k, i]     (not differentiable)
IndexTensor argmin(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_dim_raw("argmin", x, dim, keepdim, Less()).indices;
}

// y = sum_i (x_i - m)^2 / (n - c)    m = mean(x), c = 1 if unbiased else 0
// dx_i = dy * 2 (x_i - m) / (n - c)  (the terms through m cancel: sum_i (x_i - m) = 0)
Tensor var(const Tensor& x, bool unbiased) {
  const int64_t n = x.numel(), c = unbiased ? 1 : 0;
  HEED_CHECK(n > 0, "var", "cannot reduce an empty tensor of shape ", x.shape());
  HEED_CHECK(n - c > 0, "var", "unbiased variance of one element (shape ", x.shape(),
             ") divides by n - 1 = 0; pass unbiased = false");
  const real* px = x.data();
  // heed's thread count, not the calling thread's OpenMP setting (the sums' order follows it)
  const int nt = n >= kGrainElementwise ? detail::threads_now() : 1;
  double total = 0;
#pragma omp parallel for num_threads(nt) reduction(+ : total) if (nt > 1)
  for (int64_t i = 0; i < n; ++i) total += px[i];
  const double m = total / double(n);
  double ss = 0;
#pragma omp parallel for num_threads(nt) reduction(+ : ss) if (nt > 1)
  for (int64_t i = 0; i < n; ++i) ss += (px[i] - m) * (px[i] - m);
  Tensor y = scalar_tensor(real(ss / double(n - c)));
  return record("var", y, {x}, kDoubleBackward, [x = SavedTensor(x), m = real(m), n, c](const Tensor& dy, Grads& g) {
    if (g.create_graph())  // the same formula, m = mean(x) recorded
      return void(g[0] = mul(dy, mul(sub(x, mean(x)), real(2) / real(n - c))));
    const real scale = dy.item() * real(2) / real(n - c);
    g[0] = map(x, [scale, m](real v) { return scale * (v - m); });
  });
}

// y[o, i] = sum_k (x[o, k, i] - m[o, i])^2 / (n - c)     m[o, i] = mean_k x[o, k, i]
// dx[o, k, i] = dy[o, i] * 2 (x[o, k, i] - m[o, i]) / (n - c)
Tensor var(const Tensor& x, int64_t dim, bool unbiased, bool keepdim) {
  const int d = wrap_dim("var", dim, x.dim());
  const Split sp = split_at(x.shape(), d);
  const int64_t c = unbiased ? 1 : 0;
  HEED_CHECK(sp.n > 0, "var", "cannot reduce dim ", dim, " of size 0 (shape ", x.shape(), ")");
  HEED_CHECK(sp.n - c > 0, "var", "unbiased variance over dim ", dim, " of size 1 (shape ",
             x.shape(), ") divides by n - 1 = 0; pass unbiased = false");
  Tensor y = empty(reduced_shape(x.shape(), d, keepdim));
  Tensor means = empty({sp.outer, sp.inner});  // m[o, i]
  var_dim_forward(y.data(), means.data(), x.data(), sp, c);
  return record("var", y, {x}, kDoubleBackward, [x = SavedTensor(x), means, sp, c](const Tensor& dy, Grads& g) {
    if (g.create_graph()) {  // the same formula on x seen as (outer, n, inner), m recorded
      const Tensor xr = x.reshape({sp.outer, sp.n, sp.inner});
      const Tensor centred = sub(xr, mean(xr, 1, true));
      const Tensor d = mul(dy.reshape({sp.outer, 1, sp.inner}), mul(centred, real(2) / real(sp.n - c)));
      return void(g[0] = d.reshape(x.shape()));
    }
    Tensor dx = zeros(x.shape());
    var_dim_backward(dx.data(), dy.data(), x.data(), means.data(), sp, c);
    g[0] = dx;
  });
}

}  // namespace heed
