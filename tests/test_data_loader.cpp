// test_data_loader.cpp - heed::data (optim/data/): a Dataset mapped through Stack or Pad,
// loaded by make_data_loader with the sequential, random and distributed samplers; batch
// order, drop_last, a seeded order that repeats and is the same with any number of
// workers, an exception from a worker, and the errors on bad options.
#include <atomic>
#include <set>
#include <stdexcept>

#include <heed/core/random.h>
#include <heed/optim/data/data.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Example i: data (2) = {i, -i}, target () = i mod 3
struct Numbers : data::datasets::Dataset<Numbers> {
  explicit Numbers(size_t n) : n(n) {}
  ExampleType get(size_t i) override {
    if (i == fail_at) throw std::runtime_error("example " + std::to_string(i) + " is broken");
    return {from_vector({real(i), -real(i)}, {2}), scalar_tensor(real(i % 3))};
  }
  std::optional<size_t> size() const override { return n; }
  size_t n;
  size_t fail_at = size_t(-1);
};

// Sequence pairs of different lengths: source i has i + 1 ids, target i has 3 - i % 3.
struct Pairs : data::datasets::Dataset<Pairs, data::Example<IndexTensor, IndexTensor>> {
  ExampleType get(size_t i) override {
    std::vector<int64_t> src(i + 1, int64_t(i) + 1), tgt(3 - i % 3, 7);
    return {IndexTensor(src), IndexTensor(tgt)};
  }
  std::optional<size_t> size() const override { return 5; }
};

// The first data column of every batch of one epoch: which examples, in which order.
template <class Loader>
std::vector<std::vector<int>> epoch(Loader& loader) {
  std::vector<std::vector<int>> out;
  for (auto& batch : loader) {
    std::vector<int> ids;
    for (int64_t b = 0; b < batch.data.size(0); ++b) ids.push_back(int(batch.data.at({b, 0})));
    out.push_back(ids);
  }
  return out;
}

// A stream of unknown length: size() is nullopt, so make_data_loader needs a sampler.
struct Stream : data::datasets::Dataset<Stream> {
  ExampleType get(size_t i) override { return {scalar_tensor(real(i)), scalar_tensor(0)}; }
  std::optional<size_t> size() const override { return std::nullopt; }
};

}  // namespace

TEST_CASE("data loader: README's row, and a dataset without a size") {
  Numbers ds(100);
  auto loader = data::make_data_loader(ds.map(data::transforms::Stack<>()), data::DataLoaderOptions(64).workers(2));
  std::vector<int64_t> sizes;
  for (auto& batch : *loader) sizes.push_back(batch.data.size(0));
  CHECK(sizes == std::vector<int64_t>{64, 36});
  CHECK(contains(error_of([] { data::make_data_loader(Stream().map(data::transforms::Stack<>())); }),
                 "make_data_loader: the dataset's size() is unknown (nullopt): pass a sampler object"));
  auto seq = data::make_data_loader(Stream().map(data::transforms::Stack<>()), data::samplers::SequentialSampler(5),
                                    data::DataLoaderOptions(5));
  CHECK(seq->begin()->data.to_vector() == std::vector<real>{0, 1, 2, 3, 4});
}

TEST_CASE("data loader: a sequential sampler gives the dataset's order; Stack makes (B, ...) batches") {
  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
      Numbers(7).map(data::transforms::Stack<>()), data::DataLoaderOptions().batch_size(3));
  int batches = 0;
  for (auto& batch : *loader) {
    CHECK(batch.data.dim() == 2);
    CHECK(batch.data.size(1) == 2);
    CHECK(batch.target.dim() == 1);
    CHECK(batch.target.size(0) == batch.data.size(0));
    ++batches;
  }
  CHECK(batches == 3);
  CHECK(epoch(*loader) == std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}, {6}});
  // the target of example 4 is 4 mod 3
  auto it = loader->begin();
  ++it;
  CHECK(it->target.to_vector() == std::vector<real>{0, 1, 2});
}

TEST_CASE("data loader: drop_last drops the short last batch; a batch size alone is options") {
  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
      Numbers(7).map(data::transforms::Stack<>()), data::DataLoaderOptions(3).drop_last(true));
  CHECK(epoch(*loader) == std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}});
  auto exact = data::make_data_loader<data::samplers::SequentialSampler>(
      Numbers(6).map(data::transforms::Stack<>()), data::DataLoaderOptions(3).drop_last(true));
  CHECK(epoch(*exact).size() == 2);
  auto by_size = data::make_data_loader(Numbers(4).map(data::transforms::Stack<>()), 4);
  CHECK(epoch(*by_size).size() == 1);
  auto empty = data::make_data_loader(Numbers(0).map(data::transforms::Stack<>()), 4);
  CHECK(empty->begin() == empty->end());
}

TEST_CASE("data loader: RandomSampler draws a new order each epoch from heed's seed, the same with any workers") {
  auto run = [](size_t workers) {
    manual_seed(123);
    auto loader = data::make_data_loader(Numbers(10).map(data::transforms::Stack<>()),
                                         data::DataLoaderOptions().batch_size(4).workers(workers));
    std::vector<std::vector<std::vector<int>>> epochs;
    for (int e = 0; e < 3; ++e) epochs.push_back(epoch(*loader));
    return epochs;
  };
  const auto serial = run(0);
  for (const auto& ep : serial) {  // each epoch a permutation of 0..9 in batches 4, 4, 2
    REQUIRE(ep.size() == 3);
    CHECK(ep[2].size() == 2);
    std::multiset<int> seen;
    for (const auto& b : ep) seen.insert(b.begin(), b.end());
    CHECK(seen == std::multiset<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  }
  CHECK(serial[0] != serial[1]);  // a new order each epoch
  CHECK(run(0) == serial);        // the seed repeats the run
  CHECK(run(1) == serial);        // workers keep the sampler's order
  CHECK(run(3) == serial);
}

TEST_CASE("data loader: workers fetch ahead, in order, and an early break is safe") {
  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
      Numbers(50).map(data::transforms::Stack<>()), data::DataLoaderOptions(2).workers(4).max_jobs(3));
  std::vector<std::vector<int>> want;
  for (int i = 0; i < 50; i += 2) want.push_back({i, i + 1});
  for (int round = 0; round < 3; ++round) CHECK(epoch(*loader) == want);
  int seen = 0;
  for (auto& batch : *loader) {
    (void)batch;
    if (++seen == 2) break;  // the next begin() stops this epoch's threads
  }
  CHECK(epoch(*loader) == want);
}

TEST_CASE("data loader: an exception while building a batch reaches the loop at that batch") {
  for (size_t workers : {size_t(0), size_t(2)}) {
    CAPTURE(workers);
    Numbers ds(9);
    ds.fail_at = 5;
    auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
        ds.map(data::transforms::Stack<>()), data::DataLoaderOptions(2).workers(workers));
    int good = 0;
    std::string what;
    try {
      for (auto& batch : *loader) {
        (void)batch;
        ++good;
      }
    } catch (const std::runtime_error& e) {
      what = e.what();
    }
    CHECK(good == 2);  // batches {0, 1} and {2, 3}; {4, 5} throws
    CHECK(what == "example 5 is broken");
  }
}

TEST_CASE("data loader: Pad collates sequences of different lengths") {
  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
      Pairs().map(data::transforms::Pad<data::Example<IndexTensor, IndexTensor>>(0)),
      data::DataLoaderOptions(3));
  auto it = loader->begin();
  const auto& first = *it;
  CHECK(first.data.shape() == Shape{3, 3});
  CHECK(first.data.vec() == std::vector<int64_t>{1, 0, 0, 2, 2, 0, 3, 3, 3});
  CHECK(first.target.shape() == Shape{3, 3});
  CHECK(first.target.vec() == std::vector<int64_t>{7, 7, 7, 7, 7, 0, 7, 0, 0});
  CHECK(first.data.ne(0).sum(1).vec() == std::vector<int64_t>{1, 2, 3});  // the lengths
  ++it;
  CHECK(it->data.shape() == Shape{2, 5});
  ++it;
  CHECK(it == loader->end());
  data::transforms::Pad<data::Example<IndexTensor, IndexTensor>> pad(-1);
  CHECK(contains(error_of([&] { pad.apply_batch({}); }), "Pad: an empty batch"));
  CHECK(contains(error_of([&] { pad.apply_batch({{IndexTensor({1, 2, 3, 4}, {2, 2}), IndexTensor({1})}}); }),
                 "Pad: example 0's data has shape (2,2); Pad takes 1-D sequences"));
  CHECK(contains(error_of([&] { pad.apply_batch({{IndexTensor({1}), IndexTensor()}}); }),
                 "example 0's target has shape (undefined)"));
}

TEST_CASE("data loader: the DistributedSampler plugs in and shards each epoch") {
  std::vector<int> all;
  for (int rank = 0; rank < 2; ++rank) {
    data::DistributedSampler sampler(data::DistributedSamplerOptions(7, rank, 2).seed(5));
    auto loader = data::make_data_loader(Numbers(7).map(data::transforms::Stack<>()), sampler,
                                         data::DataLoaderOptions(2));
    loader->sampler().set_epoch(1);
    std::vector<int> mine;
    for (const auto& b : epoch(*loader)) mine.insert(mine.end(), b.begin(), b.end());
    std::vector<int> want;
    for (int64_t i : loader->sampler().indices()) want.push_back(int(i));
    CHECK(mine == want);
    CHECK(mine.size() == 4);  // ceil(7 / 2), padded by repeating
    all.insert(all.end(), mine.begin(), mine.end());
  }
  CHECK(std::set<int>(all.begin(), all.end()).size() == 7);
  data::DistributedSampler s(data::DistributedSamplerOptions(7, 0, 2));
  CHECK(contains(error_of([&] { s.reset(8); }), "DistributedSampler: reset to 8 examples, but num_samples is 7"));
}

TEST_CASE("data loader: libtorch's DistributedRandomSampler and DistributedSequentialSampler") {
  auto seq = data::make_data_loader(Numbers(5).map(data::transforms::Stack<>()),
                                    data::samplers::DistributedSequentialSampler(5, 2, 1), data::DataLoaderOptions(2));
  CHECK(epoch(*seq) == std::vector<std::vector<int>>{{1, 3}, {0}});  // positions 1, 3, 5 -> 0 (padded)
  auto dropped = data::make_data_loader(Numbers(5).map(data::transforms::Stack<>()),
                                        data::samplers::DistributedSequentialSampler(5, 2, 1, false), data::DataLoaderOptions(2));
  CHECK(epoch(*dropped) == std::vector<std::vector<int>>{{1, 3}});
  auto one = data::make_data_loader<data::samplers::DistributedRandomSampler>(
      Numbers(6).map(data::transforms::Stack<>()), data::DataLoaderOptions(6));
  one->sampler().set_epoch(3);
  const auto e3 = epoch(*one);
  REQUIRE(e3.size() == 1);
  CHECK(std::multiset<int>(e3[0].begin(), e3[0].end()) == std::multiset<int>{0, 1, 2, 3, 4, 5});
  CHECK(epoch(*one) == e3);  // the same epoch, the same order
}

TEST_CASE("data loader: bad options are errors naming the option") {
  auto stacked = Numbers(4).map(data::transforms::Stack<>());
  CHECK(contains(error_of([&] { data::make_data_loader(stacked, data::DataLoaderOptions(0)); }),
                 "DataLoader: batch_size must be >= 1, got 0"));
  CHECK(contains(error_of([&] { data::make_data_loader(stacked, data::DataLoaderOptions(2).workers(2).max_jobs(0)); }),
                 "DataLoader: max_jobs must be >= 1 with 2 workers, got 0"));
  CHECK(contains(error_of([&] { data::make_data_loader(stacked, data::DataLoaderOptions(2).enforce_ordering(false)); }),
                 "enforce_ordering(false) is not supported"));
  CHECK(contains(error_of([] { data::samplers::RandomSampler(-1); }), "RandomSampler: size must be >= 0, got -1"));
  data::transforms::Stack<> stack;
  CHECK(contains(error_of([&] { stack.apply_batch({}); }), "Stack: an empty batch"));
}
