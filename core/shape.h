// shape.h - Shape: the dimensions of a tensor, stored inline (no heap), and the
// broadcasting rule shared by every elementwise op.
//
// Broadcasting (NumPy/PyTorch): align shapes at the right; each pair of sizes must
// be equal or one of them 1; the result takes the larger. (2,1,4) with (3,1) -> (2,3,4).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <vector>

namespace heed {

constexpr int kMaxDims = 8;
// The most elements one buffer may have: 2^60 (2^62 or 2^63 bytes), far beyond any real
// memory, so that byte counts can never overflow.
constexpr int64_t kMaxElements = int64_t(1) << 60;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims);
  // One dim, implicitly, as libtorch's IntArrayRef: heed::randn(3) is randn({3}).
  Shape(int64_t n) : Shape({n}) {}

  int size() const { return n_; }  // rank
  // Dim i; a negative i counts from the end (s[-1] is the last, as a Python shape).
  // heed::Error naming the index and the rank outside [-rank, rank).
  int64_t operator[](int i) const { return d_[checked(i)]; }
  int64_t& operator[](int i) { return d_[checked(i)]; }
  int64_t back() const { return d_[checked(-1)]; }
  const int64_t* begin() const { return d_; }
  const int64_t* end() const { return d_ + n_; }
  void push_back(int64_t v);
  void insert(int pos, int64_t v);
  void erase(int pos);

  int64_t numel() const;                  // product of dims (1 for a scalar); heed::Error on overflow
  // numel() of a shape about to get storage: heed::Error naming `op` for a negative size
  // or more than kMaxElements elements.
  int64_t checked_numel(const char* op) const;
  std::vector<int64_t> vec() const { return {d_, d_ + n_}; }
  std::string str() const;                // "(2,3)"; "()" for a scalar
  bool operator==(const Shape& o) const {  // inline: the engine checks every gradient's shape
    if (n_ != o.n_) return false;
    for (int i = 0; i < n_; ++i)
      if (d_[i] != o.d_[i]) return false;
    return true;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  int checked(int i) const { return static_cast<unsigned>(i) < static_cast<unsigned>(n_) ? i : wrap(i); }
  int wrap(int i) const;  // i in [-n_, 0) as i + n_; heed::Error otherwise
  int64_t d_[kMaxDims] = {};
  int n_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Shape& s);

// What libtorch's x.sizes() returns: a Shape (s[0], s.size(), s.vec(), passed wherever a Shape
// goes) that prints as libtorch prints sizes, "[2, 3]" ("[]" for a scalar), where a Shape
// prints "(2,3)" in heed's messages.
class IntArrayRef : public Shape {
 public:
  using Shape::Shape;
  IntArrayRef(const Shape& s) : Shape(s) {}
};
std::ostream& operator<<(std::ostream& os, const IntArrayRef& s);

// Row-major strides of a contiguous tensor of this shape, in elements.
Shape contiguous_strides(const Shape& s);

// The product of dims [begin, end) of s: the outer and inner counts of an op that sees a
// tensor as (outer, n, inner). 0 when that product overflows int64, which can only happen
// when another dim is 0 (a tensor's whole element count is checked): the tensor is empty and
// the op has no work, so its loops must not run a wrapped-around count.
//   dims_product((2, 3, 4), 0, 2) = 6      dims_product((2^40, 2^40, 0), 0, 2) = 0
int64_t dims_product(const Shape& s, int begin, int end);

// Broadcast two shapes; throws heed::Error naming `op` and both shapes if they clash.
Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b);

// True when `from` broadcasts to exactly `to` without growing it: aligned at the right, each
// of its dims 1 or equal to to's. (3, 1) -> (2, 3, 4) yes; (3, 4) -> (4) no.
bool is_broadcastable_to(const Shape& from, const Shape& to);

// Strides of a contiguous `s` read as the broadcast shape `out` (rank >= s.size(), and
// is_broadcastable_to(s, out)), in elements: 0 on the dims `s` lacks or has as 1, so element
// (i0, ..., ik) of the broadcast view is at sum_d i_d * strides[d].
//   broadcast_strides((3, 1), (2, 3, 4)) = (0, 1, 0)
Shape broadcast_strides(const Shape& s, const Shape& out);

// Wrap a possibly negative dim into [0, rank); throws naming `op` if out of range.
int wrap_dim(const char* op, int64_t dim, int rank);

// Wrap a possibly negative index into [0, n), as PyTorch counts (-1 is the last); throws
// naming `op`, the index and n outside [-n, n).
int64_t wrap_index(const char* op, int64_t index, int64_t n);

}  // namespace heed
