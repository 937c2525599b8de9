// samplers.h - which examples a data loader fetches, in which order, as libtorch's
// torch::data::samplers: a sampler hands out indices into the dataset, batch by batch.
//
//   reset(new_size)   start an epoch (over new_size examples when given)
//   next(n)           the next up to n indices, or nullopt when the epoch is over
//
// SequentialSampler gives 0, 1, ..., N-1. RandomSampler gives a permutation of them drawn
// from heed's seeded generator (core/random.h) at each reset(), so manual_seed(s) before the
// loop repeats the epochs' orders. data::DistributedSampler (optim/distributed_sampler.h)
// has the same two methods and gives this rank's shard of the epoch set by set_epoch().
// DistributedRandomSampler and DistributedSequentialSampler are it under libtorch's names.
// Any class with these two methods plugs into make_data_loader (data_loader.h).
// Copying: a sampler is a value (size, order, position); a copy continues independently.
// Nothing here throws except RandomSampler's constructor for a negative size.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "../distributed_sampler.h"

namespace heed::data::samplers {

class SequentialSampler {
 public:
  explicit SequentialSampler(size_t size) : size_(size) {}
  void reset(std::optional<size_t> new_size = std::nullopt);
  std::optional<std::vector<size_t>> next(size_t batch_size);
  size_t index() const { return index_; }  // how many indices this epoch has handed out

 private:
  size_t size_, index_ = 0;
};

class RandomSampler {
 public:
  // size: examples per epoch; the first permutation is drawn here, the next at each reset().
  explicit RandomSampler(int64_t size);
  void reset(std::optional<size_t> new_size = std::nullopt);
  std::optional<std::vector<size_t>> next(size_t batch_size);
  size_t index() const { return index_; }

 private:
  std::vector<size_t> order_;
  size_t index_ = 0;
};

// libtorch's names for data::DistributedSampler (optim/distributed_sampler.h), with its
// argument order: allow_duplicates pads the shards to equal size by repeating examples
// (DistributedSamplerOptions::drop_last(false)), else the extra examples are dropped.
// Call set_epoch(e) before each epoch for a new shuffle (the random one).
class DistributedRandomSampler : public data::DistributedSampler {
 public:
  explicit DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                                    bool allow_duplicates = true)
      : DistributedSampler(DistributedSamplerOptions(int64_t(size), int(rank), int(num_replicas))
                               .drop_last(!allow_duplicates)) {}
};

class DistributedSequentialSampler : public data::DistributedSampler {
 public:
  explicit DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                                        bool allow_duplicates = true)
      : DistributedSampler(DistributedSamplerOptions(int64_t(size), int(rank), int(num_replicas))
                               .shuffle(false)
                               .drop_last(!allow_duplicates)) {}
};

}  // namespace heed::data::samplers
