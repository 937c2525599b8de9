// test_distributed_sampler.cpp - data::DistributedSampler shards as torch's does.
#include <algorithm>
#include <set>

#include <heed/optim/distributed_sampler.h>
#include "helpers.h"

using namespace heed;
using data::DistributedSampler;
using data::DistributedSamplerOptions;
using heed::test::error_of;

TEST_CASE("without shuffle the shards are torch's indices[rank::world], padded from the start") {
  // torch: list(DistributedSampler(range(10), num_replicas=4, rank=r, shuffle=False))
  const std::vector<std::vector<int64_t>> torch_pad = {{0, 4, 8}, {1, 5, 9}, {2, 6, 0}, {3, 7, 1}};
  const std::vector<std::vector<int64_t>> torch_drop = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  for (int r = 0; r < 4; ++r) {
    DistributedSampler pad(DistributedSamplerOptions(10, r, 4).shuffle(false));
    DistributedSampler drop(DistributedSamplerOptions(10, r, 4).shuffle(false).drop_last(true));
    CHECK(pad.size() == 3);
    CHECK(pad.indices() == torch_pad[r]);
    CHECK(drop.size() == 2);
    CHECK(drop.indices() == torch_drop[r]);
  }
  // Fewer examples than ranks: the padding repeats the list as often as needed.
  CHECK(DistributedSampler(DistributedSamplerOptions(2, 4, 5).shuffle(false)).indices() ==
        std::vector<int64_t>{0});
  CHECK(DistributedSampler(DistributedSamplerOptions(2, 4, 5).drop_last(true)).size() == 0);
}

TEST_CASE("shuffled shards are disjoint, cover the data, and change with the epoch only") {
  const int64_t n = 103;
  const int w = 4;
  for (int epoch : {0, 1}) {
    std::vector<int64_t> all;
    for (int r = 0; r < w; ++r) {
      DistributedSampler s(DistributedSamplerOptions(n, r, w).seed(42));
      s.set_epoch(epoch);
      std::vector<int64_t> shard = s.indices();
      CHECK(int64_t(shard.size()) == s.size());
      CHECK(s.size() == 26);  // ceil(103 / 4): every rank steps the same number of times
      all.insert(all.end(), shard.begin(), shard.end());
    }
    // 104 slots: every example once, plus the permutation's first example again as padding
    std::set<int64_t> distinct(all.begin(), all.end());
    CHECK(distinct.size() == size_t(n));
    CHECK(*distinct.begin() == 0);
    CHECK(*distinct.rbegin() == n - 1);
  }
  // Another process (rank) with the same seed and epoch draws the same permutation ...
  DistributedSampler a(DistributedSamplerOptions(n, 1, w).seed(42));
  DistributedSampler b(DistributedSamplerOptions(n, 1, w).seed(42));
  a.set_epoch(3);
  b.set_epoch(3);
  CHECK(a.indices() == b.indices());
  // ... a new epoch a new one, and it is not the identity.
  std::vector<int64_t> e3 = a.indices();
  a.set_epoch(4);
  CHECK(a.indices() != e3);
  CHECK(e3 != DistributedSampler(DistributedSamplerOptions(n, 1, w).shuffle(false)).indices());
}

TEST_CASE("DistributedSampler rejects a bad rank, world size or size") {
  CHECK(error_of([] { DistributedSampler(DistributedSamplerOptions(10, 4, 4)); }) ==
        "DistributedSampler: rank 4 is outside [0, 4)");
  CHECK(error_of([] { DistributedSampler(DistributedSamplerOptions(10, 0, 0)); }) ==
        "DistributedSampler: world_size must be >= 1, got 0");
  CHECK(error_of([] { DistributedSampler(DistributedSamplerOptions(-1, 0, 1)); }) ==
        "DistributedSampler: num_samples must be >= 0, got -1");
}
