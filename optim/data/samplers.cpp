// samplers.cpp - SequentialSampler and RandomSampler (samplers.h).
#include "samplers.h"

#include <algorithm>
#include <numeric>

#include "../../core/error.h"
#include "../../core/random.h"

namespace heed::data::samplers {

namespace {

// The next up to n of `count` positions from `index` on, or nullopt at the end.
std::optional<std::vector<size_t>> take(size_t& index, size_t count, size_t n,
                                        const std::vector<size_t>* order) {
  if (index >= count || n == 0) return std::nullopt;
  const size_t end = std::min(count, index + n);
  std::vector<size_t> out(end - index);
  for (size_t i = 0; i < out.size(); ++i) out[i] = order ? (*order)[index + i] : index + i;
  index = end;
  return out;
}

}  // namespace

void SequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}

std::optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  return take(index_, size_, batch_size, nullptr);
}

RandomSampler::RandomSampler(int64_t size) {
  HEED_CHECK(size >= 0, "RandomSampler", "size must be >= 0, got ", size);
  order_.resize(size_t(size));
  reset();
}

// A Fisher-Yates shuffle, swapping i with a draw from [0, i], from heed's generator.
void RandomSampler::reset(std::optional<size_t> new_size) {
  if (new_size) order_.resize(*new_size);
  std::iota(order_.begin(), order_.end(), size_t(0));
  Draws d;
  for (size_t i = order_.size(); i > 1; --i) {
    const size_t j = std::min(i - 1, size_t(d.uniform() * double(i)));
    std::swap(order_[i - 1], order_[j]);
  }
  index_ = 0;
}

std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  return take(index_, order_.size(), batch_size, &order_);
}

}  // namespace heed::data::samplers
