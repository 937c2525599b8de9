// index_tensor.cpp - the operations on ids (core/tensor.h, IndexTensor): shape changes,
// selection, comparison, sums, cat and stack. Every result is a new IndexTensor (a copy:
// ids are small, and a value type never aliases). Each op checks its arguments and throws
// heed::Error naming itself and the values, with Tensor's rules and wording.
#include <algorithm>
#include <limits>

#include "error.h"
#include "region.h"
#include "tensor.h"

namespace heed {

namespace {

using indexing::Slice;
using indexing::TensorIndex;

void check_defined(const char* op, const IndexTensor& t) {
  HEED_CHECK(t.defined(), op, "use of an undefined IndexTensor");
}

// The region of t that `indices` picks, as a new IndexTensor.
IndexTensor pick(const char* op, const IndexTensor& t, const std::vector<TensorIndex>& indices) {
  check_defined(op, t);
  const detail::Region r = detail::resolve_region(op, t.shape(), indices);
  std::vector<int64_t> ids(r.out.numel());
  detail::walk_region(r, [&](int64_t off, int64_t k) { ids[k] = t.data()[off]; });
  return IndexTensor(std::move(ids), r.out);
}

// Whole slices up to dim d, then `last`: the index list of an op along one dim.
std::vector<TensorIndex> along(int d, TensorIndex last) {
  std::vector<TensorIndex> v(d, TensorIndex(Slice()));
  v.push_back(last);
  return v;
}

// y[i] = f(a[i'], b[i'']) over the broadcast shape, as Tensor's zip.
template <class F>
IndexTensor zip_ids(const char* op, const IndexTensor& a, const IndexTensor& b, const F& f) {
  check_defined(op, a);
  check_defined(op, b);
  const Shape out = broadcast_shapes(op, a.shape(), b.shape());
  const Shape sa = broadcast_strides(a.shape(), out), sb = broadcast_strides(b.shape(), out);
  std::vector<int64_t> ids(out.numel());
  int64_t idx[kMaxDims] = {}, oa = 0, ob = 0;
  for (size_t k = 0; k < ids.size(); ++k) {
    ids[k] = f(a.data()[oa], b.data()[ob]);
    for (int d = out.size() - 1; d >= 0; --d) {
      if (++idx[d] < out[d]) {
        oa += sa[d];
        ob += sb[d];
        break;
      }
      oa -= sa[d] * (out[d] - 1);
      ob -= sb[d] * (out[d] - 1);
      idx[d] = 0;
    }
  }
  return IndexTensor(std::move(ids), out);
}

}  // namespace

// ---------------------------------------------------------------- values

int64_t IndexTensor::item() const {
  check_defined("item", *this);
  HEED_CHECK(numel() == 1, "item", "only a one-element IndexTensor has an item; shape is ", shape_);
  return ids_[0];
}

int64_t IndexTensor::at(std::initializer_list<int64_t> index) const {
  check_defined("at", *this);
  HEED_CHECK(static_cast<int>(index.size()) == dim(), "at", "got ", index.size(),
             " indices for an IndexTensor of shape ", shape_);
  int64_t off = 0, d = 0;
  for (int64_t i : index) {
    HEED_CHECK(i >= -shape_[d] && i < shape_[d], "at", "index ", i, " out of range for dim ", d,
               " of shape ", shape_);
    off = off * shape_[d] + (i < 0 ? i + shape_[d] : i);
    ++d;
  }
  return ids_[off];
}

IndexTensor IndexTensor::eq(const IndexTensor& o) const {
  return zip_ids("eq", *this, o, [](int64_t a, int64_t b) { return int64_t(a == b); });
}
IndexTensor IndexTensor::ne(const IndexTensor& o) const {
  return zip_ids("ne", *this, o, [](int64_t a, int64_t b) { return int64_t(a != b); });
}
IndexTensor IndexTensor::eq(int64_t id) const { return eq(IndexTensor({id}, Shape{})); }
IndexTensor IndexTensor::ne(int64_t id) const { return ne(IndexTensor({id}, Shape{})); }

IndexTensor IndexTensor::sum() const {
  check_defined("sum", *this);
  int64_t total = 0;
  for (int64_t v : ids_)
    HEED_CHECK(!__builtin_add_overflow(total, v, &total), "sum", "the sum of the ids overflows int64");
  return IndexTensor({total}, Shape{});
}

IndexTensor IndexTensor::sum(int64_t dim, bool keepdim) const {
  check_defined("sum", *this);
  const int d = wrap_dim("sum", dim, this->dim());
  if (this->dim() == 0) return *this;
  const int64_t outer = dims_product(shape_, 0, d), n = shape_[d], inner = dims_product(shape_, d + 1, this->dim());
  Shape out = shape_;
  if (keepdim) out[d] = 1;
  else out.erase(d);
  std::vector<int64_t> ids(outer * inner, 0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t i = 0; i < inner; ++i)
        HEED_CHECK(!__builtin_add_overflow(ids[o * inner + i], ids_[(o * n + k) * inner + i], &ids[o * inner + i]),
                   "sum", "the sum of the ids overflows int64");
  return IndexTensor(std::move(ids), out);
}

Tensor IndexTensor::mean() const {
  check_defined("mean", *this);
  HEED_CHECK(numel() > 0, "mean", "mean of an empty IndexTensor of shape ", shape_);
  double total = 0;
  for (int64_t v : ids_) total += double(v);
  return scalar_tensor(real(total / double(numel())));
}

Tensor IndexTensor::to_tensor() const {
  check_defined("to_tensor", *this);
  Tensor t = heed::empty(shape_);
  for (int64_t i = 0; i < numel(); ++i) t.data()[i] = real(ids_[i]);
  return t;
}

IndexTensor& IndexTensor::fill_(int64_t id) {
  check_defined("fill_", *this);
  std::fill(ids_.begin(), ids_.end(), id);
  return *this;
}

IndexTensor IndexTensor::to(const Device& device) const {
  check_defined("to", *this);
  detail::check_device("to", device);
  return *this;
}

IndexTensor IndexTensor::to(ScalarType type) const {
  check_defined("to", *this);
  HEED_CHECK(type == kLong, "to", "an IndexTensor holds int64 ids (kLong); for real numbers "
             "write ids.to_tensor()");
  return *this;
}

IndexTensor IndexTensor::empty(const Shape& shape) { return full(shape, 0); }

IndexTensor IndexTensor::full(const Shape& shape, int64_t id) {
  const int64_t n = shape.checked_numel("IndexTensor::full");
  return IndexTensor(std::vector<int64_t>(size_t(n), id), shape);
}

IndexTensor IndexTensor::from_blob(const int64_t* data, const Shape& shape,
                                   const std::function<void(void*)>& deleter, const TensorOptions& o) {
  const int64_t n = shape.checked_numel("from_blob");
  HEED_CHECK(data != nullptr || n == 0, "from_blob", "a null pointer for shape ", shape);
  HEED_CHECK(o.dtype() == kLong, "from_blob", "int64_t ids need dtype kLong; a real dtype takes a ",
             "float pointer (heed::from_blob(float*, ...))");
  detail::check_device("from_blob", o.device());
  HEED_CHECK(!o.requires_grad(), "from_blob", "ids cannot require grad");
  IndexTensor t(std::vector<int64_t>(data, data + n), shape);
  if (deleter) deleter(const_cast<int64_t*>(data));  // copied: the memory is no longer needed
  return t;
}

IndexTensor IndexTensor::from_blob(const int64_t* data, const Shape& shape, const TensorOptions& o) {
  return from_blob(data, shape, std::function<void(void*)>(), o);
}

// ---------------------------------------------------------------- shape

IndexTensor IndexTensor::reshape(const Shape& shape) const {
  const char* op = "IndexTensor::reshape";
  check_defined(op, *this);
  Shape s = shape;  // one dim may be -1, as in Tensor::reshape
  int64_t known = 1;
  int infer = -1;
  for (int i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      HEED_CHECK(infer < 0, op, "only one dim can be -1 in ", shape);
      infer = i;
    } else if (__builtin_mul_overflow(known, s[i], &known)) {
      fail(op, "the element count of ", shape, " overflows int64");
    }
  }
  if (infer >= 0) {
    HEED_CHECK(known > 0 && numel() % known == 0, op, "cannot reshape ", shape_, " to ", shape);
    s[infer] = numel() / known;
  }
  HEED_CHECK(s.numel() == numel(), op, "cannot reshape ", shape_, " (", numel(), " ids) to ", shape);
  return IndexTensor(ids_, s);
}

IndexTensor IndexTensor::view(const Shape& shape) const { return reshape(shape); }

IndexTensor IndexTensor::flatten(int64_t start_dim, int64_t end_dim) const {
  check_defined("flatten", *this);
  if (dim() == 0) return reshape(Shape{1});
  const int s0 = wrap_dim("flatten", start_dim, dim()), s1 = wrap_dim("flatten", end_dim, dim());
  HEED_CHECK(s0 <= s1, "flatten", "start_dim ", start_dim, " comes after end_dim ", end_dim);
  Shape s;
  int64_t merged = 1;
  for (int i = 0; i < dim(); ++i) {
    if (i < s0 || i > s1) s.push_back(shape_[i]);
    else merged *= shape_[i];
    if (i == s1) s.push_back(merged);
  }
  return reshape(s);
}

IndexTensor IndexTensor::squeeze(int64_t d) const {
  check_defined("squeeze", *this);
  const int w = wrap_dim("squeeze", d, dim());
  if (dim() == 0 || shape_[w] != 1) return *this;  // as PyTorch: nothing to squeeze
  Shape s = shape_;
  s.erase(w);
  return IndexTensor(ids_, s);
}

IndexTensor IndexTensor::squeeze() const {
  check_defined("squeeze", *this);
  Shape s;
  for (int64_t n : shape_)
    if (n != 1) s.push_back(n);
  return IndexTensor(ids_, s);
}

IndexTensor IndexTensor::unsqueeze(int64_t d) const {
  check_defined("unsqueeze", *this);
  Shape s = shape_;
  s.insert(wrap_dim("unsqueeze", d, dim() + 1), 1);
  return IndexTensor(ids_, s);
}

IndexTensor IndexTensor::permute(const std::vector<int64_t>& dims) const {
  const char* op = "permute";
  check_defined(op, *this);
  HEED_CHECK(int(dims.size()) == dim(), op, "got ", dims.size(), " dims for shape ", shape_);
  bool seen[kMaxDims] = {};
  Shape out, from;  // out[i] = shape[p[i]]; from[i] = the input stride dim i walks
  const Shape st = contiguous_strides(shape_);
  for (int64_t d : dims) {
    const int w = wrap_dim(op, d, dim());
    HEED_CHECK(!seen[w], op, "dim ", d, " appears twice in the permutation of shape ", shape_);
    seen[w] = true;
    out.push_back(shape_[w]);
    from.push_back(st[w]);
  }
  std::vector<int64_t> ids(numel());
  int64_t idx[kMaxDims] = {}, off = 0;
  for (size_t k = 0; k < ids.size(); ++k) {
    ids[k] = ids_[off];
    for (int d = dim() - 1; d >= 0; --d) {
      if (++idx[d] < out[d]) {
        off += from[d];
        break;
      }
      off -= from[d] * (out[d] - 1);
      idx[d] = 0;
    }
  }
  return IndexTensor(std::move(ids), out);
}

IndexTensor IndexTensor::transpose(int64_t d0, int64_t d1) const {
  check_defined("transpose", *this);
  if (dim() == 0) {
    wrap_dim("transpose", d0, 0);
    wrap_dim("transpose", d1, 0);
    return *this;
  }
  std::vector<int64_t> p(dim());
  for (int i = 0; i < dim(); ++i) p[i] = i;
  std::swap(p[wrap_dim("transpose", d0, dim())], p[wrap_dim("transpose", d1, dim())]);
  return permute(p);
}

IndexTensor IndexTensor::t() const {
  check_defined("t", *this);
  HEED_CHECK(dim() <= 2, "t", "expects an IndexTensor of at most 2 dims, got shape ", shape_,
             " (use transpose(d0, d1))");
  return dim() < 2 ? *this : transpose(0, 1);
}

IndexTensor IndexTensor::select(int64_t dim, int64_t index) const {
  check_defined("select", *this);
  HEED_CHECK(this->dim() > 0, "select", "cannot select from a 0-dim IndexTensor");
  const int d = wrap_dim("select", dim, this->dim());
  const int64_t n = shape_[d];
  HEED_CHECK(index >= -n && index < n, "select", "index ", index, " is out of range for dim ", dim,
             " of shape ", shape_, " (size ", n, ")");
  return pick("select", *this, along(d, index));
}

IndexTensor IndexTensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  check_defined("narrow", *this);
  HEED_CHECK(this->dim() > 0, "narrow", "cannot narrow a 0-dim IndexTensor");
  const int d = wrap_dim("narrow", dim, this->dim());
  const int64_t n = shape_[d];
  HEED_CHECK(start >= 0 && length >= 0 && start <= n && length <= n - start, "narrow", "start ",
             start, " length ", length, " out of range for dim ", dim, " of shape ", shape_);
  return pick("narrow", *this, along(d, Slice(start, start + length)));
}

IndexTensor IndexTensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  check_defined("slice", *this);
  HEED_CHECK(this->dim() > 0, "slice", "cannot slice a 0-dim IndexTensor");
  const int d = wrap_dim("slice", dim, this->dim());
  HEED_CHECK(step >= 1, "slice", "step must be >= 1, got ", step);
  return pick("slice", *this, along(d, Slice(start, end, step)));
}

IndexTensor IndexTensor::index(const std::vector<TensorIndex>& indices) const {
  return pick("index", *this, indices);
}

// ---------------------------------------------------------------- cat, stack

IndexTensor cat(const std::vector<IndexTensor>& xs, int64_t dim) {
  const char* op = "cat";
  HEED_CHECK(!xs.empty(), op, "needs at least one IndexTensor");
  for (const IndexTensor& x : xs) check_defined(op, x);
  const Shape& s0 = xs[0].shape();
  HEED_CHECK(s0.size() > 0, op, "cannot join 0-dim IndexTensors (use stack)");
  const int d = wrap_dim(op, dim, s0.size());
  Shape out = s0;
  out[d] = 0;
  for (const IndexTensor& x : xs) {
    bool same = x.dim() == s0.size();
    for (int i = 0; same && i < s0.size(); ++i) same = i == d || x.shape()[i] == s0[i];
    HEED_CHECK(same, op, "shapes ", s0, " and ", x.shape(), " differ outside dim ", dim);
    out[d] += x.shape()[d];
  }
  const int64_t outer = dims_product(s0, 0, d), inner = dims_product(s0, d + 1, s0.size());
  std::vector<int64_t> ids;
  ids.reserve(out.numel());
  for (int64_t o = 0; o < outer; ++o)
    for (const IndexTensor& x : xs) {
      const int64_t block = x.shape()[d] * inner;
      ids.insert(ids.end(), x.data() + o * block, x.data() + (o + 1) * block);
    }
  return IndexTensor(std::move(ids), out);
}

IndexTensor stack(const std::vector<IndexTensor>& xs, int64_t dim) {
  const char* op = "stack";
  HEED_CHECK(!xs.empty(), op, "needs at least one IndexTensor");
  for (const IndexTensor& x : xs) {
    check_defined(op, x);
    HEED_CHECK(x.shape() == xs[0].shape(), op, "shapes ", xs[0].shape(), " and ", x.shape(), " differ");
  }
  const int d = wrap_dim(op, dim, xs[0].dim() + 1);
  std::vector<IndexTensor> parts;
  for (const IndexTensor& x : xs) parts.push_back(x.unsqueeze(d));
  return cat(parts, d);
}

}  // namespace heed
