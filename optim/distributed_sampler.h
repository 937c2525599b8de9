// distributed_sampler.h - which examples each of N data-parallel processes trains on, per
// epoch (torch.utils.data.DistributedSampler's rule). No MPI here: rank and world size are
// plain ints, so this lives in the main library; optim/distributed_mpi.h supplies them.
//
//   data::DistributedSampler sampler(
//       data::DistributedSamplerOptions(dataset_size, dist::rank(), dist::world_size()).seed(7));
//   for (int epoch = 0; epoch < E; ++epoch) {
//     sampler.set_epoch(epoch);                       // a new shuffle, the same on every rank
//     for (int64_t i : sampler.indices()) ...         // this rank's shard
//   }
//
// The rule, for N examples on W ranks:
//   1. every rank draws the same permutation of 0..N-1, seeded by seed + epoch (or keeps
//      0..N-1 when shuffle is off), so the shards of one epoch are disjoint;
//   2. drop_last off: the list is padded to a multiple of W by repeating it from its start
//      (a few examples are seen twice per epoch); on: it is cut to a multiple of W;
//   3. rank r takes positions r, r + W, r + 2W, ... (torch's indices[rank::world]).
// Equal shards matter: averaging the gradients of unequal shards is not the gradient of
// their union (see the banner of optim/distributed_mpi.h).
//
// The permutation is a Fisher-Yates shuffle driven by std::mt19937_64, whose output the C++
// standard fixes, so every rank, compiler and machine draws the same one. It is not
// torch's randperm: the same seed gives a different (equally uniform) order.
// It plugs into the data loader (optim/data/data_loader.h) through the samplers' two methods:
//   auto loader = data::make_data_loader(std::move(ds), sampler, data::DataLoaderOptions(32));
//   loader->sampler().set_epoch(epoch);  for (auto& batch : *loader) ...
// reset() takes this rank's shard of the epoch last set, next(n) hands it out n at a time.
// Copying: a DistributedSampler is a value (options, size, epoch, the shard being handed out);
// a copy is independent. A throwing constructor, indices() or reset() leaves nothing behind.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "../core/arg.h"

namespace heed::data {

class DistributedSamplerOptions {
 public:
  DistributedSamplerOptions(int64_t num_samples, int rank, int world_size)
      : num_samples_(num_samples), rank_(rank), world_size_(world_size) {}
  HEED_ARG(int64_t, num_samples);
  HEED_ARG(int, rank);
  HEED_ARG(int, world_size);
  HEED_ARG(bool, shuffle) = true;
  HEED_ARG(uint64_t, seed) = 0;
  HEED_ARG(bool, drop_last) = false;
};

class DistributedSampler {
 public:
  // Throws heed::Error for a negative size, a world size below 1 or a rank outside it.
  explicit DistributedSampler(const DistributedSamplerOptions& options);
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }
  int64_t size() const { return per_rank_; }  // examples per rank per epoch, the same on all
  // This rank's shard of the current epoch. Builds the permutation of all N indices (8N
  // bytes): a heed::Error naming N when that cannot be allocated.
  std::vector<int64_t> indices() const;
  // The data loader's sampler interface (optim/data/samplers.h). new_size, when given, must
  // be num_samples (heed::Error otherwise: the shards are fixed by the options).
  void reset(std::optional<size_t> new_size = std::nullopt);
  std::optional<std::vector<size_t>> next(size_t batch_size);

 private:
  DistributedSamplerOptions options_;
  int64_t per_rank_;
  int64_t epoch_ = 0;
  std::vector<int64_t> shard_;  // this epoch's shard, as reset() took it
  size_t next_ = 0;             // how much of it next() has handed out
};

}  // namespace heed::data
