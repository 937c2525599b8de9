// slice.h - the index list of x.index({...}) and x.index_put_({...}, v), as libtorch's
// torch::indexing (Python's x[:, 0::2]):
//
//   Python               heed
//   x[:, 0]              x.index({Slice(), 0})                 integer: that dim removed
//   x[1:-1]              x.index({Slice(1, -1)})               Slice(start, stop, step)
//   x[:, 0::2] = v       x.index_put_({Slice(), Slice(0, None, 2)}, v)
//   x[None, ..., -1]     x.index({None, Ellipsis, -1})         None: a new dim of size 1
//
// with `using namespace heed::indexing;`. A slice follows Python: start and stop may be
// negative (counted from the end) and are clamped to the size, step must be positive (as
// PyTorch's); None as a bound means "from the start" / "to the end". Ellipsis (or "...")
// stands for every dim not indexed otherwise; dims after the listed ones are taken whole.
// Indices are checked where they are used (autograd/ops/tensor_index.h), against the shape.
#pragma once
#include <cstdint>
#include <optional>
#include <type_traits>

namespace heed::indexing {

// None: a Slice bound left out, or, as an index of its own, a new dim of size 1.
inline constexpr std::nullopt_t None = std::nullopt;

struct EllipsisIndexType {};
inline constexpr EllipsisIndexType Ellipsis{};

class Slice {
 public:
  Slice(std::optional<int64_t> start = None, std::optional<int64_t> stop = None,
        std::optional<int64_t> step = None)
      : start_(start), stop_(stop), step_(step) {}
  const std::optional<int64_t>& start() const { return start_; }
  const std::optional<int64_t>& stop() const { return stop_; }
  const std::optional<int64_t>& step() const { return step_; }

 private:
  std::optional<int64_t> start_, stop_, step_;
};

// One entry of an index list: an integer, a Slice, None or Ellipsis. Implicit, so that
// {Slice(), 0} is a list of two; any integer type works (a size_t loop counter too).
class TensorIndex {
 public:
  enum class Kind { Integer, Slice, None, Ellipsis };
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  TensorIndex(I i) : kind_(Kind::Integer), integer_(static_cast<int64_t>(i)) {}
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}
  // "..." as libtorch accepts it; any other string is an error where the list is used.
  TensorIndex(const char* s)
      : kind_(s && s[0] == '.' && s[1] == '.' && s[2] == '.' && !s[3] ? Kind::Ellipsis : Kind::None),
        bad_string_(kind_ != Kind::Ellipsis) {}

  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  const Slice& slice() const { return slice_; }
  bool bad_string() const { return bad_string_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  Slice slice_;
  bool bad_string_ = false;
};

}  // namespace heed::indexing
