// distributed_sampler.cpp - shard a dataset across ranks (rule in distributed_sampler.h).
#include "distributed_sampler.h"

#include <algorithm>
#include <new>
#include <random>

#include "../core/error.h"

namespace heed::data {

DistributedSampler::DistributedSampler(const DistributedSamplerOptions& options) : options_(options) {
  const int64_t n = options.num_samples();
  const int w = options.world_size(), r = options.rank();
  HEED_CHECK(n >= 0, "DistributedSampler", "num_samples must be >= 0, got ", n);
  HEED_CHECK(w >= 1, "DistributedSampler", "world_size must be >= 1, got ", w);
  HEED_CHECK(r >= 0 && r < w, "DistributedSampler", "rank ", r, " is outside [0, ", w, ")");
  // drop_last: the largest multiple of W that fits; else the smallest that holds all N
  // (ceil(n / w) written so that it cannot overflow for n near INT64_MAX).
  per_rank_ = options.drop_last() ? n / w : n / w + (n % w != 0);
}

std::vector<int64_t> DistributedSampler::indices() const {
  const int64_t n = options_.num_samples();
  const int64_t w = options_.world_size();
  // 1. the same order on every rank (n indices, 8n bytes: refused before allocating when
  //    no vector can hold them, and an allocation the system refuses is a heed::Error too)
  std::vector<int64_t> order;
  HEED_CHECK(static_cast<uint64_t>(n) <= order.max_size(), "DistributedSampler",
             "num_samples ", n, " is more indices than a vector can hold");
  try {
    order.resize(n);
  } catch (const std::bad_alloc&) {
    fail("DistributedSampler", "cannot allocate the permutation of num_samples ", n, " indices (",
         n, " * 8 bytes)");
  }
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  if (options_.shuffle()) {
    std::mt19937_64 gen(options_.seed() + static_cast<uint64_t>(epoch_));
    for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates; the modulo bias is below 2^-40
      int64_t j = static_cast<int64_t>(gen() % static_cast<uint64_t>(i + 1));
      std::swap(order[i], order[j]);
    }
  }
  // 2. pad (repeating from the start) or cut to per_rank * W, 3. take every W-th from rank
  std::vector<int64_t> shard(per_rank_);
  for (int64_t k = 0; k < per_rank_; ++k) shard[k] = order[(options_.rank() + k * w) % n];
  return shard;
}

void DistributedSampler::reset(std::optional<size_t> new_size) {
  HEED_CHECK(!new_size || int64_t(*new_size) == options_.num_samples(), "DistributedSampler",
             "reset to ", new_size.value_or(0), " examples, but num_samples is ", options_.num_samples());
  shard_ = indices();
  next_ = 0;
}

std::optional<std::vector<size_t>> DistributedSampler::next(size_t batch_size) {
  if (next_ >= shard_.size() || batch_size == 0) return std::nullopt;
  const size_t end = std::min(shard_.size(), next_ + batch_size);
  std::vector<size_t> out(shard_.begin() + next_, shard_.begin() + end);
  next_ = end;
  return out;
}

}  // namespace heed::data
