// shape.cpp - transpose, permute (and movedim, swapaxes), slice, narrow (and chunk,
// split, unbind), cat, stack: ops that copy elements to new places without changing them.
//
// Every heed tensor is contiguous, so each of these ops copies (but a slice or narrow that is
// one block of its input, which shares the input's storage: slice_op below), and they all use
// one kernel pair over a *strided view* of a buffer: element (i0, ..., ik) of the view lives at
//     offset + i0*strides[0] + ... + ik*strides[k]
//   gather_view   out = view(src)     the view's elements, row-major, into a contiguous tensor
//   scatter_view  view(dst) = src     a contiguous tensor back into the view's positions
// An op only builds its view; the backward runs the other kernel of the pair:
//   transpose/permute  view = x with strides reordered    y = gather(x)    dx = inverse permute of dy
//   slice/narrow       view = x, offset start*stride,     y = gather(x)    dx = zeros, scatter(dy)
//                      stride[dim] *= step
//   cat                view_i = input i's block of y      y = scatter(x_i) dx_i = gather(dy)
//   stack              cat of the inputs, each unsqueezed at dim
#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <sstream>

#include "../../core/error.h"
#include "../../core/parallel.h"
#include "../engine/node.h"
#include "shape.h"

namespace heed {

// ---------------------------------------------------------------- the strided-copy kernel

namespace {  // file-local types

// A view into a contiguous buffer: `shape` is the view's (and the contiguous side's) shape.
struct StridedView {
  Shape shape;
  Shape strides;  // in elements, one per dim of shape
  int64_t offset = 0;
};

// A block of the copy: rows x cols elements, at `c` on the contiguous side (rows `ld` apart,
// columns adjacent) and at `s` on the strided side (rows `rs` apart, columns `cs` apart).
struct Tile {
  int64_t c, s, rows, cols, ld, rs, cs;
};

}  // namespace

// The view of the contiguous tensor of shape `s` that keeps elements start, start+step, ...
// (len of them) along dim d.
// The callers keep start + (len - 1) * step < s[d], so offset and stride stay inside the
// buffer; a step with len <= 1 is never taken and is set to 1 (a huge one would overflow).
static StridedView slice_view(const Shape& s, int d, int64_t start, int64_t len, int64_t step) {
  StridedView v{s, contiguous_strides(s), 0};
  v.offset = start * v.strides[d];
  v.strides[d] *= len > 1 ? step : 1;
  v.shape[d] = len;
  return v;
}

constexpr int64_t kTile = 32;  // 32x32 tiles: both sides of a float tile fit in L1

// Calls f(tile) for tiles covering the view, in parallel. Steps:
//   1. coalesce: drop size-1 dims and merge dim d into d-1 when stride[d-1] == stride[d]*size[d]
//      (contiguous on both sides), so a slice of rows is one long row and a (B,H,T,D)
//      transpose of the last two dims is (B*H, D, T).
//   2. if the last dim is contiguous on the strided side, the tiles are single rows; else
//      tile the last dim with the dim of smallest stride (the one a transpose moved away),
//      so reads and writes both stay inside kTile x kTile blocks (the (B,H,T,D) ->
//      (B,H,D,T) transpose in attention).
template <class F>
static void for_each_tile(const StridedView& v, const F& f) {
  if (v.shape.numel() == 0) return;
  // 1. coalesce
  Shape n, st;
  for (int d = 0; d < v.shape.size(); ++d) {
    if (v.shape[d] == 1) continue;
    const int k = n.size();
    if (k > 0 && st[k - 1] == v.strides[d] * v.shape[d]) {
      n[k - 1] *= v.shape[d];
      st[k - 1] = v.strides[d];
    } else {
      n.push_back(v.shape[d]);
      st.push_back(v.strides[d]);
    }
  }
  if (n.size() == 0) {  // one element
    n.push_back(1);
    st.push_back(1);
  }
  const int k = n.size(), last = k - 1;
  const Shape cst = contiguous_strides(n);
  // 2. choose the tiling: p is the dim tiled together with the last one (-1: plain rows)
  int p = -1;
  if (k >= 2 && st[last] != 1) {
    p = 0;
    for (int d = 1; d < last; ++d)
      if (std::abs(st[d]) < std::abs(st[p])) p = d;
  }
  const int64_t tr = p < 0 ? 1 : kTile, tc = p < 0 ? n[last] : kTile;
  Shape blocks = n;  // work items: one per (outer index, row block, column block)
  if (p >= 0) blocks[p] = (n[p] + tr - 1) / tr;
  blocks[last] = (n[last] + tc - 1) / tc;
  const int64_t items = blocks.numel();
  parallel_for(items, kGrainElementwise / (tr * tc) + 1, [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      Tile t{0, v.offset, 1, 0, 0, 0, st[last]};
      int64_t rem = item;
      for (int d = last; d >= 0; --d) {
        int64_t i = rem % blocks[d];
        rem /= blocks[d];
        if (d == p) {
          i *= tr;
          t.rows = std::min(tr, n[d] - i);
        } else if (d == last) {
          i *= tc;
          t.cols = std::min(tc, n[d] - i);
        }
        t.c += i * cst[d];
        t.s += i * st[d];
      }
      if (p >= 0) {
        t.ld = cst[p];
        t.rs = st[p];
      }
      f(t);
    }
  });
}

// out = view(src): the view's elements in row-major order into the contiguous `out`.
static void gather_view(const real* src, const StridedView& v, real* out) {
  for_each_tile(v, [&](const Tile& t) {
    for (int64_t r = 0; r < t.rows; ++r) {
      real* o = out + t.c + r * t.ld;
      const real* s = src + t.s + r * t.rs;
      if (t.cs == 1)
        for (int64_t j = 0; j < t.cols; ++j) o[j] = s[j];
      else
        for (int64_t j = 0; j < t.cols; ++j) o[j] = s[j * t.cs];
    }
  });
}

// view(dst) = src: the contiguous `src` into the view's positions (the inverse of gather_view).
// Views here never map two elements to one position, so tiles can be written in parallel.
static void scatter_view(const real* src, const StridedView& v, real* dst) {
  for_each_tile(v, [&](const Tile& t) {
    for (int64_t r = 0; r < t.rows; ++r) {
      const real* c = src + t.c + r * t.ld;
      real* s = dst + t.s + r * t.rs;
      if (t.cs == 1)
        for (int64_t j = 0; j < t.cols; ++j) s[j] = c[j];
      else
        for (int64_t j = 0; j < t.cols; ++j) s[j * t.cs] = c[j];
    }
  });
}

// ---------------------------------------------------------------- transpose, permute

// y.shape[i] = x.shape[perm[i]]: the copy behind transpose and permute (records nothing).
static Tensor permute_copy(const Tensor& x, const std::vector<int64_t>& perm) {
  const Shape xs = contiguous_strides(x.shape());
  StridedView v{x.shape(), xs, 0};
  for (int i = 0; i < x.dim(); ++i) {
    v.shape[i] = x.shape()[static_cast<int>(perm[i])];
    v.strides[i] = xs[static_cast<int>(perm[i])];
  }
  Tensor y = empty(v.shape);
  gather_view(x.data(), v, y.data());
  return y;
}

// y = x with dims d0 and d1 swapped       dx = dy with d0 and d1 swapped back
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  const int a = wrap_dim("transpose", d0, x.dim()), b = wrap_dim("transpose", d1, x.dim());
  std::vector<int64_t> perm(x.dim());
  std::iota(perm.begin(), perm.end(), 0);
  if (x.dim() > 0) std::swap(perm[a], perm[b]);
  Tensor y = permute_copy(x, perm);
  detail::mark_view(y, "transpose", -1, false);
  return record("transpose", y, {x}, kDoubleBackward, [a, b](const Tensor& dy, Grads& g) {
    g[0] = transpose(dy, a, b);
  });
}

static std::string dims_str(const std::vector<int64_t>& dims) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < dims.size(); ++i) os << (i ? "," : "") << dims[i];
  os << "]";
  return os.str();
}

// y.shape[i] = x.shape[dims[i]]           dx = dy permuted by the inverse of dims
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  const int r = x.dim();
  HEED_CHECK(static_cast<int>(dims.size()) == r, "permute", "dims ", dims_str(dims),
             " do not match the rank of shape ", x.shape());
  std::vector<int64_t> perm(r), inverse(r, -1);
  for (int i = 0; i < r; ++i) {
    perm[i] = wrap_dim("permute", dims[i], r);
    HEED_CHECK(inverse[perm[i]] < 0, "permute", "dims ", dims_str(dims),
               " are not a permutation (dim ", perm[i], " repeats)");
    inverse[perm[i]] = i;
  }
  Tensor y = permute_copy(x, perm);
  detail::mark_view(y, "permute", -1, false);
  return record("permute", y, {x}, kDoubleBackward, [inverse](const Tensor& dy, Grads& g) {
    g[0] = permute(dy, inverse);
  });
}

// y = permute(x, perm) with perm moving each source[i] to destination[i] and the other dims,
// in order, into the places left                        dx = dy permuted back (permute's)
Tensor movedim(const Tensor& x, const std::vector<int64_t>& source, const std::vector<int64_t>& destination) {
  const int r = x.dim();
  HEED_CHECK(source.size() == destination.size(), "movedim", "Invalid source or destination dims: source (",
             dims_str(source), " dims) should contain the same number of dims as destination (",
             dims_str(destination), " dims)");
  std::vector<int64_t> perm(r, -1);
  std::vector<bool> moved(r, false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int s = wrap_dim("movedim", source[i], r), t = wrap_dim("movedim", destination[i], r);
    HEED_CHECK(!moved[s], "movedim", "repeated dim in `source` (", dims_str(source), ")");
    HEED_CHECK(perm[t] < 0, "movedim", "repeated dim in `destination` (", dims_str(destination), ")");
    moved[s] = true;
    perm[t] = s;
  }
  int64_t next = 0;  // the dims not moved fill the free places in order
  for (int64_t& p : perm) {
    if (p >= 0) continue;
    while (moved[next]) ++next;
    p = next++;
  }
  Tensor y = named("movedim", permute(x, perm), {x});
  detail::mark_view(y, "movedim", -1, false);
  return y;
}

Tensor movedim(const Tensor& x, int64_t source, int64_t destination) {
  return movedim(x, std::vector<int64_t>{source}, std::vector<int64_t>{destination});
}

// transpose, named as the caller spelled it (its node is libtorch's TransposeBackward0)
static Tensor renamed_transpose(const char* op, const Tensor& x, int64_t d0, int64_t d1) {
  Tensor y = transpose(x, d0, d1);
  detail::mark_view(y, op, -1, false);
  return y;
}
Tensor swapaxes(const Tensor& x, int64_t d0, int64_t d1) { return renamed_transpose("swapaxes", x, d0, d1); }
Tensor swapdims(const Tensor& x, int64_t d0, int64_t d1) { return renamed_transpose("swapdims", x, d0, d1); }

// ---------------------------------------------------------------- slice, narrow

// The pair as recorded ops, each the other's backward (so both differentiate to any order):
// y = x's elements under view v (a slice, a block of cat)   dx = zeros(x's shape), dy scattered to v
// y = zeros(shape), x scattered to v                         dx = dy's elements under v
static Tensor scatter_op(const Tensor& x, const StridedView& v, const Shape& shape);

static Tensor gather_op(const char* op, const Tensor& x, const StridedView& v) {
  Tensor y = empty(v.shape);
  gather_view(x.data(), v, y.data());
  return record(op, y, {x}, kDoubleBackward, [v, xs = x.shape()](const Tensor& dy, Grads& g) {
    g[0] = scatter_op(dy, v, xs);
  });
}

static Tensor scatter_op(const Tensor& x, const StridedView& v, const Shape& shape) {
  Tensor y = zeros(shape);
  scatter_view(x.data(), v, y.data());
  return record("slice_backward", y, {x}, kDoubleBackward, [v](const Tensor& dy, Grads& g) {
    g[0] = gather_op("slice", dy, v);
  });
}

// True when x's elements start, start+step, ... (len of them) along dim d are one contiguous
// block of x: every dim before d has size 1, and the step is 1 or never taken.
static bool is_block(const Shape& s, int d, int64_t len, int64_t step) {
  for (int i = 0; i < d; ++i)
    if (s[i] != 1) return false;
  return step == 1 || len <= 1;
}

// y = x[start : start + len*step : step] along dim d      dx = zeros, dy scattered back there
// A block of x (is_block) is a shared view: y's storage is x's, starting at element
// start * stride(d); anything else is a gathered copy, marked as one (core/tensor.h, "Views").
static Tensor slice_op(const char* op, const Tensor& x, int d, int64_t start, int64_t len,
                         int64_t step) {
  const StridedView v = slice_view(x.shape(), d, start, len, step);
  const ViewMark& xv = x.impl()->view;
  if (!is_block(x.shape(), d, len, step) || (xv.op && !xv.shares)) {
    Tensor y = gather_op(op, x, v);
    detail::mark_copy(y, x, op, d);
    return y;
  }
  Tensor y = detail::share_block(x, v.offset, v.shape, op, d);
  return record(op, y, {x}, kDoubleBackward, [v, xs = x.shape()](const Tensor& dy, Grads& g) {
    g[0] = scatter_op(dy, v, xs);
  });
}

// y's view mark says op made it, along dim d; shared or a copy as the view it came from
// (a view of a copy keeps the copy's mark, set by slice_op).
static Tensor remark(const Tensor& y, const char* op, int d, const Tensor& x) {
  const ViewMark& xv = x.impl()->view;
  if (!(xv.op && !xv.shares)) detail::mark_view(y, op, d, y.impl()->view.shares);
  return y;
}

// y = x[start:end:step] along dim (Python rules)        dx = zeros, dy scattered back there
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  HEED_CHECK(x.dim() > 0, "slice", "cannot slice a 0-dim tensor");
  const int d = wrap_dim("slice", dim, x.dim());
  HEED_CHECK(step >= 1, "slice", "step must be >= 1, got ", step);
  const int64_t n = x.shape()[d];
  auto clamp = [n](int64_t i) { return std::clamp(i < 0 ? i + n : i, int64_t{0}, n); };
  const int64_t b = clamp(start), e = std::max(clamp(end), b);
  // ceil((e - b) / step) without forming e - b + step - 1, which overflows for a huge step
  const int64_t len = e > b ? (e - b - 1) / step + 1 : 0;
  return slice_op("slice", x, d, b, len, step);
}

// y = x[start : start+length] along dim                   dx = zeros, dy scattered back there
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  HEED_CHECK(x.dim() > 0, "narrow", "cannot narrow a 0-dim tensor");
  const int d = wrap_dim("narrow", dim, x.dim());
  const int64_t n = x.shape()[d];  // start + length <= n, written so that it cannot overflow
  HEED_CHECK(start >= 0 && length >= 0 && start <= n && length <= n - start, "narrow", "start ",
             start, " length ", length, " out of range for dim ", dim, " of shape ", x.shape());
  return slice_op("narrow", x, d, start, length, 1);
}

// y = squeeze(narrow(x, dim, index, 1), dim)             dx = dy put back at `index`, 0 elsewhere
Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  HEED_CHECK(x.dim() > 0, "select", "cannot select from a 0-dim tensor");
  const int d = wrap_dim("select", dim, x.dim());
  const int64_t n = x.shape()[d];
  HEED_CHECK(index >= -n && index < n, "select", "index ", index, " is out of range for dim ", dim,
             " of shape ", x.shape(), " (size ", n, ")");
  return remark(named("select", squeeze(narrow(x, d, index < 0 ? index + n : index, 1), d), {x}), "select", d, x);
}

// One piece of chunk, split or split_with_sizes: narrow(x, d, start, len) named op.
static Tensor piece(const char* op, const Tensor& x, int d, int64_t start, int64_t len) {
  return remark(named(op, narrow(x, d, start, len), {x}), op, d, x);
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  HEED_CHECK(x.dim() > 0, "chunk", "expects at least a 1-dimensional tensor");
  HEED_CHECK(chunks > 0, "chunk", "expects `chunks` to be greater than 0, got: ", chunks);
  const int d = wrap_dim("chunk", dim, x.dim());
  const int64_t n = x.shape()[d];
  const int64_t len = n / chunks + (n % chunks != 0);  // ceil(n / chunks), without overflow
  std::vector<Tensor> pieces;
  if (n == 0) {
    for (int64_t i = 0; i < chunks; ++i) pieces.push_back(piece("chunk", x, d, 0, 0));
    return pieces;
  }
  for (int64_t start = 0; start < n; start += len)
    pieces.push_back(piece("chunk", x, d, start, std::min(len, n - start)));
  return pieces;
}

// pieces i = x[i*s : min((i+1)*s, n)] along dim          dx = the pieces' gradients side by side
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  HEED_CHECK(x.dim() > 0, "split", "expects at least a 1-dimensional tensor");
  const int d = wrap_dim("split", dim, x.dim());
  const int64_t n = x.shape()[d];
  HEED_CHECK(split_size >= 0, "split", "expects split_size be non-negative, but got split_size=", split_size);
  HEED_CHECK(split_size > 0 || n == 0, "split", "split_size can only be 0 if dimension size is 0, but got dimension size of ", n);
  if (n == 0) return {piece("split", x, d, 0, 0)};  // one empty piece, as torch
  std::vector<Tensor> pieces;
  for (int64_t start = 0; start < n; start += std::min(split_size, n - start))
    pieces.push_back(piece("split", x, d, start, std::min(split_size, n - start)));
  return pieces;
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& split_sizes, int64_t dim) {
  HEED_CHECK(x.dim() > 0, "split_with_sizes", "expects at least a 1-dimensional tensor");
  const int d = wrap_dim("split_with_sizes", dim, x.dim());
  const int64_t n = x.shape()[d];
  int64_t total = 0;
  bool ok = true;
  for (int64_t s : split_sizes) ok = ok && s >= 0 && !__builtin_add_overflow(total, s, &total);
  HEED_CHECK(ok && total == n, "split_with_sizes", "expects split_sizes to sum exactly to ", n,
             " (input tensor's size at dimension ", dim, "), but got split_sizes=", IntArrayRef(Shape(split_sizes)));
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    pieces.push_back(piece("split_with_sizes", x, d, start, s));
    start += s;
  }
  return pieces;
}

// pieces i = x.select(dim, i)                           dx = the pieces' gradients stacked
std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
  HEED_CHECK(x.dim() > 0, "unbind", "dimension specified as ", dim, " but tensor has no dimensions");
  const int d = wrap_dim("unbind", dim, x.dim());
  std::vector<Tensor> pieces;
  for (int64_t i = 0; i < x.shape()[d]; ++i) pieces.push_back(remark(named("unbind", select(x, d, i), {x}), "unbind", d, x));
  return pieces;
}

// ---------------------------------------------------------------- cat, stack

// y = [x_0, x_1, ...] joined along dim                     dx_i = dy's block of x_i along dim
Tensor cat(const std::vector<Tensor>& xs, int64_t dim) {
  HEED_CHECK(!xs.empty(), "cat", "needs at least one tensor");
  const Shape& s0 = xs[0].shape();
  HEED_CHECK(s0.size() > 0, "cat", "cannot concatenate 0-dim tensors");
  const int d = wrap_dim("cat", dim, s0.size());
  Shape out = s0;
  out[d] = 0;
  for (const Tensor& x : xs) {
    bool ok = x.dim() == s0.size();
    for (int i = 0; ok && i < s0.size(); ++i) ok = i == d || x.shape()[i] == s0[i];
    HEED_CHECK(ok, "cat", "shapes ", s0, " and ", x.shape(), " differ outside dim ", dim);
    if (__builtin_add_overflow(out[d], x.shape()[d], &out[d]))  // sizes of empty tensors can be huge
      fail("cat", "the joined size of dim ", dim, " overflows int64 (adding ", x.shape(), ")");
  }
  Tensor y = empty(out);
  std::vector<StridedView> views;  // input i's block of y
  int64_t at = 0;
  for (const Tensor& x : xs) {
    views.push_back(slice_view(out, d, at, x.shape()[d], 1));
    scatter_view(x.data(), views.back(), y.data());
    at += x.shape()[d];
  }
  return record("cat", y, xs, kDoubleBackward, [views](const Tensor& dy, Grads& g) {
    for (int i = 0; i < g.size(); ++i)
      if (g.needs(i)) g[i] = gather_op("cat", dy, views[i]);  // recorded under create_graph
  });
}

// y = cat of each x_i unsqueezed at dim (a new dim)    dx_i = dy's slice i along dim
Tensor stack(const std::vector<Tensor>& xs, int64_t dim) {
  HEED_CHECK(!xs.empty(), "stack", "needs at least one tensor");
  const int d = wrap_dim("stack", dim, xs[0].dim() + 1);
  std::vector<Tensor> parts;
  for (const Tensor& x : xs) {
    HEED_CHECK(x.shape() == xs[0].shape(), "stack", "shapes ", xs[0].shape(), " and ",
               x.shape(), " differ; stack needs equal shapes");
    parts.push_back(unsqueeze(x, d));
  }
  return named("stack", cat(parts, d), {});
}

Tensor cat(std::initializer_list<Tensor> xs, int64_t dim) { return cat(std::vector<Tensor>(xs), dim); }
Tensor stack(std::initializer_list<Tensor> xs, int64_t dim) { return stack(std::vector<Tensor>(xs), dim); }

Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return heed::transpose(*this, d0, d1); }
Tensor Tensor::permute(const std::vector<int64_t>& dims) const { return heed::permute(*this, dims); }
Tensor Tensor::movedim(int64_t source, int64_t destination) const { return heed::movedim(*this, source, destination); }
Tensor Tensor::movedim(const std::vector<int64_t>& source, const std::vector<int64_t>& destination) const {
  return heed::movedim(*this, source, destination);
}
Tensor Tensor::swapaxes(int64_t d0, int64_t d1) const { return heed::swapaxes(*this, d0, d1); }
Tensor Tensor::swapdims(int64_t d0, int64_t d1) const { return heed::swapdims(*this, d0, d1); }

}  // namespace heed
