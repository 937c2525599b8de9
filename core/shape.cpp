#include "shape.h"

#include <ostream>

#include "error.h"

namespace heed {

Shape::Shape(std::initializer_list<int64_t> dims) {
  for (int64_t v : dims) push_back(v);
}

Shape::Shape(const std::vector<int64_t>& dims) {
  for (int64_t v : dims) push_back(v);
}

void Shape::push_back(int64_t v) {
  HEED_CHECK(n_ < kMaxDims, "Shape", "at most ", kMaxDims, " dims are supported");
  HEED_CHECK(v >= -1, "Shape", "negative size ", v);  // -1: "infer" in reshape
  d_[n_++] = v;
}

void Shape::insert(int pos, int64_t v) {
  push_back(0);
  for (int i = n_ - 1; i > pos; --i) d_[i] = d_[i - 1];
  d_[pos] = v;
}

void Shape::erase(int pos) {
  for (int i = pos; i + 1 < n_; ++i) d_[i] = d_[i + 1];
  --n_;
}

// Overflow-checked: a shape whose element count does not fit int64 is an error, never a
// wrapped-around count (zeros({1 << 40, 1 << 40}) must not silently hold 0 elements).
int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < n_; ++i)
    if (__builtin_mul_overflow(n, d_[i], &n))
      fail("Shape", "the element count of shape ", str(), " overflows int64");
  return n;
}

int64_t Shape::checked_numel(const char* op) const {
  for (int i = 0; i < n_; ++i)
    HEED_CHECK(d_[i] >= 0, op, "negative size ", d_[i], " in shape ", str(),
               " (-1 means 'infer' only in reshape/view)");
  const int64_t n = numel();
  HEED_CHECK(n <= kMaxElements, op, "shape ", str(), " has ", n, " elements, more than the ",
             kMaxElements, " any buffer can hold");
  return n;
}

std::string Shape::str() const {
  std::string s = "(";
  for (int i = 0; i < n_; ++i) {
    if (i) s += ",";
    s += std::to_string(d_[i]);
  }
  return s + ")";
}

std::ostream& operator<<(std::ostream& os, const Shape& s) { return os << s.str(); }

std::ostream& operator<<(std::ostream& os, const IntArrayRef& s) {
  os << "[";
  for (int i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  return os << "]";
}

// The running product wraps (unsigned) instead of overflowing: it can outgrow int64 only for
// a shape with a 0 dim, whose strides are never used to reach an element.
Shape contiguous_strides(const Shape& s) {
  Shape st = s;
  uint64_t acc = 1;
  for (int i = s.size() - 1; i >= 0; --i) {
    st[i] = int64_t(acc);
    acc *= uint64_t(s[i]);
  }
  return st;
}

int64_t dims_product(const Shape& s, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i)
    if (__builtin_mul_overflow(p, s[i], &p)) return 0;
  return p;
}

bool is_broadcastable_to(const Shape& from, const Shape& to) {
  const int off = to.size() - from.size();
  if (off < 0) return false;
  for (int i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[off + i]) return false;
  return true;
}

Shape broadcast_strides(const Shape& s, const Shape& out) {
  Shape st = out;
  const Shape cs = contiguous_strides(s);
  const int off = out.size() - s.size();
  for (int i = 0; i < out.size(); ++i) st[i] = (i < off || s[i - off] == 1) ? 0 : cs[i - off];
  return st;
}

Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b) {
  const int n = a.size() > b.size() ? a.size() : b.size();
  Shape out;
  for (int i = 0; i < n; ++i) {
    const int ia = a.size() - n + i, ib = b.size() - n + i;
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    HEED_CHECK(da == db || da == 1 || db == 1, op, "shapes ", a, " and ", b, " cannot be broadcast");
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

int wrap_dim(const char* op, int64_t dim, int rank) {
  const int r = rank == 0 ? 1 : rank;  // a scalar accepts dim 0 / -1, as in PyTorch
  HEED_CHECK(dim >= -r && dim < r, op, "dim ", dim, " out of range for a tensor of rank ", rank);
  return static_cast<int>(dim < 0 ? dim + r : dim);
}

int64_t wrap_index(const char* op, int64_t index, int64_t n) {
  HEED_CHECK(index >= -n && index < n, op, "index ", index, " is out of range for size ", n,
             " (valid: ", -n, " to ", n - 1, ")");
  return index < 0 ? index + n : index;
}

int Shape::wrap(int i) const { return static_cast<int>(wrap_index("Shape[]", i, n_)); }

}  // namespace heed
