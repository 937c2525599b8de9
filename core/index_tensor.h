// index_tensor.h - IndexTensor: integer ids with a shape (token ids, class targets, gather
// indices), and the operations a training loop does on them (core/index_tensor.cpp).
// core/tensor.h includes this header at its end, so <heed/core/tensor.h> gives both.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <limits>
#include <type_traits>
#include <vector>

#include "shape.h"
#include "slice.h"
#include "tensor.h"

namespace heed {

// ---- integer indices: token ids, class targets, gather indices ----
// A plain value type of int64 ids with a shape. Ops that take one (index_select, gather,
// embedding, cross_entropy) check every id against the size it indexes. Unlike Tensor, a
// copy copies the ids: select, reshape and the other shape methods return new IndexTensors
// (never views), and fill_ changes only the one it is called on.
//
// The operations a training loop does on ids (core/index_tensor.cpp), each a heed::Error
// naming the op and the offending values when out of range:
//   IndexTensor y_t = target.select(1, t);               // (B, T) -> (B): teacher forcing
//   IndexTensor top = logits.argmax(-1);                 // (B, V) -> (B); topk(...).indices too
//   int64_t hits = top.eq(y_t).sum().item<int64_t>();    // correct guesses
//   double acc = top.eq(y_t).mean().item();              // a float Tensor scalar
//   IndexTensor next = cat({prefix, top.unsqueeze(1)}, 1);
// A default-constructed IndexTensor is undefined (defined() false, no ids): "none given".
class IndexTensor {
 public:
  IndexTensor() = default;
  IndexTensor(std::vector<int64_t> ids);                  // 1-D
  IndexTensor(std::vector<int64_t> ids, const Shape& shape);
  bool defined() const { return defined_; }
  const Shape& shape() const { return shape_; }
  IntArrayRef sizes() const { return shape_; }
  int dim() const { return shape_.size(); }
  int64_t size(int64_t d) const;
  int64_t numel() const { return static_cast<int64_t>(ids_.size()); }
  const int64_t* data() const { return ids_.data(); }
  int64_t* data() { return ids_.data(); }
  // Id i of the ids in row-major order (negative: from the end, as PyTorch counts);
  // heed::Error naming the index and numel() outside [-numel(), numel()).
  int64_t operator[](int64_t i) const {
    return ids_[i >= 0 && i < numel() ? i : wrap_index("IndexTensor[]", i, numel())];
  }
  const std::vector<int64_t>& vec() const { return ids_; }
  // Throws heed::Error naming `op` if any id is outside [0, bound).
  void check_range(const char* op, int64_t bound) const;

  int64_t item() const;  // the id of a one-element IndexTensor
  template <class T>
  T item() const;        // x.item<int64_t>(), as libtorch; a T too small for the id: heed::Error
  int64_t at(std::initializer_list<int64_t> index) const;  // one id, bounds-checked, may be negative

  // ---- shape: the same rules and messages as Tensor's ----
  IndexTensor reshape(const Shape& shape) const;  // one dim may be -1
  IndexTensor view(const Shape& shape) const;     // = reshape
  IndexTensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  IndexTensor squeeze(int64_t d) const;           // as it is when size(d) != 1, as PyTorch
  IndexTensor squeeze() const;
  IndexTensor unsqueeze(int64_t d) const;
  IndexTensor transpose(int64_t d0, int64_t d1) const;
  IndexTensor permute(const std::vector<int64_t>& dims) const;
  IndexTensor select(int64_t dim, int64_t index) const;     // dim removed; index may be negative
  IndexTensor narrow(int64_t dim, int64_t start, int64_t length) const;
  // Elements start, start+step, ... < end along dim, Python's clamping (heed::slice's rules).
  IndexTensor slice(int64_t dim, int64_t start = 0, int64_t end = std::numeric_limits<int64_t>::max(),
                    int64_t step = 1) const;
  IndexTensor index(const std::vector<indexing::TensorIndex>& indices) const;  // core/slice.h

  // ---- values ----
  // 0/1 ids where the ids are equal / differ; the two broadcast as Tensors do.
  IndexTensor eq(const IndexTensor& other) const;
  IndexTensor ne(const IndexTensor& other) const;
  IndexTensor eq(int64_t id) const;
  IndexTensor ne(int64_t id) const;
  IndexTensor sum() const;                                      // shape ()
  IndexTensor sum(int64_t dim, bool keepdim = false) const;
  Tensor mean() const;  // a float Tensor of shape (): accuracy is eq(...).mean()
  Tensor to_tensor() const;  // the ids as reals, same shape (libtorch's .to(torch::kFloat))
  IndexTensor& fill_(int64_t id);
  IndexTensor clone() const { return *this; }  // a copy of the ids, as every copy is
  IndexTensor t() const;     // transpose(0, 1) of a 2-D IndexTensor; a 0-D or 1-D one as it is
  // As Tensor's: ids live on the CPU, so to(kCPU) and cpu() return a copy of *this and
  // another device is a heed::Error; to(kLong) is the same ids, to(kFloat) is to_tensor()'s
  // work spelled libtorch's way and so is refused here with the name to use.
  IndexTensor to(const Device& device) const;
  IndexTensor to(ScalarType type) const;
  IndexTensor cpu() const { return *this; }
  Device device() const { return kCPU; }

  // ---- factories: torch::empty / torch::full / torch::zeros with torch::kLong ----
  static IndexTensor empty(const Shape& shape);  // ids set to 0 (a vector has no uninitialised form)
  static IndexTensor full(const Shape& shape, int64_t id);
  static IndexTensor zeros(const Shape& shape) { return full(shape, 0); }
  // torch::from_blob(data, sizes, torch::kLong): unlike a Tensor, an IndexTensor owns its ids,
  // so this copies them, and calls the deleter (if any) at once; o.dtype() must be kLong.
  static IndexTensor from_blob(const int64_t* data, const Shape& shape, const TensorOptions& o = TensorOptions(kLong));
  static IndexTensor from_blob(const int64_t* data, const Shape& shape,
                               const std::function<void(void*)>& deleter,
                               const TensorOptions& o = TensorOptions(kLong));

 private:
  std::vector<int64_t> ids_;
  Shape shape_;
  bool defined_ = false;
};

// Joined along an existing dim (cat) or a new one (stack), as heed::cat / heed::stack.
IndexTensor cat(const std::vector<IndexTensor>& xs, int64_t dim = 0);
IndexTensor stack(const std::vector<IndexTensor>& xs, int64_t dim = 0);

// torch::from_blob over int64 ids (torch::kLong): IndexTensor::from_blob, a copy.
inline IndexTensor from_blob(int64_t* data, const Shape& shape, const TensorOptions& o = TensorOptions(kLong)) {
  return IndexTensor::from_blob(data, shape, o);
}
inline IndexTensor from_blob(int64_t* data, const Shape& shape, const std::function<void(void*)>& deleter,
                             const TensorOptions& o = TensorOptions(kLong)) {
  return IndexTensor::from_blob(data, shape, deleter, o);
}

// heed::tensor(label) for an integer label: a 0-D IndexTensor (declared with tensor(double)).
namespace detail {
IndexTensor id_scalar(int64_t value, const TensorOptions& o);
}
template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
IndexTensor tensor(I value, const TensorOptions& o = TensorOptions(kLong)) {
  return detail::id_scalar(int64_t(value), o);
}

// Nested, one row a line, as a Tensor prints: "IndexTensor(2,2)\n[[1, 2],\n [3, 4]]".
std::ostream& operator<<(std::ostream& os, const IndexTensor& t);

template <class T>
T IndexTensor::item() const {
  static_assert(std::is_arithmetic_v<T>, "item<T>(): T must be a number type (int64_t, int, ...)");
  const int64_t v = item();
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (v < int64_t(std::numeric_limits<T>::min()) ||
        (v > 0 && uint64_t(v) > uint64_t(std::numeric_limits<T>::max())))
      detail::fail_item_range(double(v), "the requested integer type");
  }
  return static_cast<T>(v);
}


// torch::randint: integers uniform in [low, high) ([0, high) with high alone) from the seeded
// generator (core/random.h). Without options they are ids, as libtorch's default kLong: an
// IndexTensor. With options, torch::randint(0, 10, {15, 1}, torch::kFloat) (a device,
// requires_grad), a real Tensor holding those integers. high <= low is a heed::Error.
IndexTensor randint(int64_t low, int64_t high, const Shape& shape);
IndexTensor randint(int64_t high, const Shape& shape);
Tensor randint(int64_t low, int64_t high, const Shape& shape, const TensorOptions& o);
Tensor randint(int64_t high, const Shape& shape, const TensorOptions& o);

}  // namespace heed
