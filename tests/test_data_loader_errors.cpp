// test_data_loader_errors.cpp - heed::data's DataLoader when something goes wrong: a batch
// that throws (the epoch goes on, with any number of workers, and never blocks), a begin()
// under a live iterator (refused, as libtorch), dereferencing a lost batch or the end, a
// throwing begin(); then a property test that drives the loader with random exceptions,
// worker counts, early exits and restarts. Every case runs under a watchdog: a hang fails
// the test after 60 s instead of stopping the suite. These cases also run under `make tsan`.
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <heed/core/random.h>
#include <heed/optim/data/data.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Runs f (which owns everything it uses) on a thread of its own and returns what it returns,
// or "hang" if it has not returned after 60 s; the blocked thread is then left behind, so the
// test fails instead of hanging. What f throws is rethrown here.
std::string within_a_minute(std::function<std::string()> f) {
  auto result = std::make_shared<std::promise<std::string>>();
  std::future<std::string> done = result->get_future();
  std::thread([result, f = std::move(f)] {
    try {
      result->set_value(f());
    } catch (...) {
      result->set_exception(std::current_exception());
    }
  }).detach();
  if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) return "hang";
  return done.get();
}

// Example i: data (1) = {i}, target () = 0. get(i) throws for i in bad_get; the transform
// (Failing, below) throws for a batch holding an index in bad_transform. Both sets are only
// read while the loader runs.
struct Flaky : data::datasets::Dataset<Flaky> {
  Flaky(size_t n, std::set<size_t> bad) : n(n), bad(std::make_shared<const std::set<size_t>>(std::move(bad))) {}
  ExampleType get(size_t i) override {
    if (bad->count(i)) throw std::runtime_error("example " + std::to_string(i) + " is broken");
    return {from_vector({real(i)}, {1}), scalar_tensor(0)};
  }
  std::optional<size_t> size() const override { return n; }
  size_t n;
  std::shared_ptr<const std::set<size_t>> bad;
};

struct Failing {
  std::shared_ptr<const std::set<size_t>> bad;
  data::Example<> apply_batch(std::vector<data::Example<>> batch) const {
    for (const auto& e : batch)
      if (bad->count(size_t(e.data.item()))) throw std::logic_error("the transform refuses the batch");
    return data::transforms::Stack<>().apply_batch(std::move(batch));
  }
};

// A sampler that writes down each batch of indices it hands out (the loader's workers call
// next() under the loader's lock; the test reads the log while they may still run).
template <class Inner>
struct Logged {
  Logged(Inner inner) : inner(std::move(inner)) {}
  void reset(std::optional<size_t> n = std::nullopt) {
    inner.reset(n);
    std::lock_guard<std::mutex> lock(log->mu);
    log->batches.clear();
  }
  std::optional<std::vector<size_t>> next(size_t b) {
    auto idx = inner.next(b);
    std::lock_guard<std::mutex> lock(log->mu);
    if (idx) log->batches.push_back(*idx);
    return idx;
  }
  std::vector<std::vector<size_t>> batches() const {
    std::lock_guard<std::mutex> lock(log->mu);
    return log->batches;
  }
  Inner inner;
  struct Log {
    std::mutex mu;
    std::vector<std::vector<size_t>> batches;
  };
  std::shared_ptr<Log> log = std::make_shared<Log>();
};

using Batch = std::vector<size_t>;  // a delivered batch's indices; empty: the batch threw
Batch ids(const data::Example<>& b) {
  Batch out;
  for (real v : b.data.to_vector()) out.push_back(size_t(v));
  return out;
}

// One epoch, the way a loop that catches a batch's exception and goes on reads it: after an
// exception (from the first comparison or from ++) it advances with ++. Stops after `limit`
// events (batches and exceptions), leaving the iterator to be destroyed mid-epoch.
template <class Loader>
std::vector<Batch> read_epoch(Loader& loader, size_t limit = size_t(-1)) {
  std::vector<Batch> events;
  auto it = loader.begin();
  const auto end = loader.end();
  bool advance = false;
  while (events.size() < limit) {
    try {
      if (advance) ++it;
      advance = true;
      if (it == end) break;
      events.push_back(ids(*it));
    } catch (const std::exception&) {
      events.push_back({});
    }
  }
  return events;
}

}  // namespace

TEST_CASE("data loader: after a batch throws, ++ goes on to the end of the epoch with 0 to 4 workers") {
  for (size_t workers = 0; workers <= 4; ++workers) {
    CAPTURE(workers);
    const std::string got = within_a_minute([workers] {
      auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
          Flaky(9, {5}).map(data::transforms::Stack<>()), data::DataLoaderOptions(2).workers(workers));
      std::ostringstream out;
      for (const Batch& b : read_epoch(*loader)) {
        out << "{";
        for (size_t i : b) out << i << ",";
        out << "}";
      }
      return out.str();
    });
    CHECK(got == "{0,1,}{2,3,}{}{6,7,}{8,}");  // {4, 5} threw and is lost; nothing else
  }
}

// The sampler's next() runs on the workers (under the loader's lock): its exception is a lost
// batch like a dataset's, and the epoch goes on from where the sampler is.
TEST_CASE("data loader: an exception from the sampler is a lost batch in its place, with 0 to 3 workers") {
  struct Hiccup : data::samplers::SequentialSampler {
    using SequentialSampler::SequentialSampler;
    std::optional<std::vector<size_t>> next(size_t b) {
      if (++calls == 2) throw std::runtime_error("the sampler hiccups");
      return SequentialSampler::next(b);
    }
    int calls = 0;
  };
  for (size_t workers = 0; workers <= 3; ++workers) {
    CAPTURE(workers);
    const std::string got = within_a_minute([workers] {
      auto loader = data::make_data_loader(Flaky(6, {}).map(data::transforms::Stack<>()), Hiccup(6),
                                           data::DataLoaderOptions(2).workers(workers));
      std::ostringstream out;
      for (const Batch& b : read_epoch(*loader)) out << (b.empty() ? std::string("lost") : std::to_string(b[0])) << " ";
      return out.str();
    });
    CHECK(got == "0 lost 2 4 ");
  }
}

TEST_CASE("data loader: the exception reaching the loop is the one the batch threw, unchanged") {
  for (size_t workers : {size_t(0), size_t(3)}) {
    CAPTURE(workers);
    const std::string got = within_a_minute([workers] {
      auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
          Flaky(4, {0}).map(data::transforms::Stack<>()), data::DataLoaderOptions(2).workers(workers));
      auto it = loader->begin();
      std::string what;
      try {
        (void)(it == loader->end());  // the first batch is fetched here, and throws
      } catch (const std::runtime_error& e) {
        what = e.what();
      }
      what += " | " + error_of([&] { (void)*it; });
      ++it;
      what += " | " + std::to_string(ids(*it)[0]);
      ++it;
      what += it == loader->end() ? " | end" : " | not end";
      what += " | " + error_of([&] { (void)*it; }) + " | " + error_of([&] { ++it; });
      return what;
    });
    CHECK(contains(got, "example 0 is broken | DataLoader: dereferencing an iterator whose batch threw"));
    CHECK(contains(got, "| 2 | end | DataLoader: dereferencing an iterator at the end of its epoch"));
    CHECK(contains(got, "DataLoader: ++ on an iterator at the end of its epoch"));
  }
}

TEST_CASE("data loader: begin() under a live iterator that is not exhausted is refused, as libtorch") {
  for (size_t workers : {size_t(0), size_t(2)}) {
    CAPTURE(workers);
    const std::string got = within_a_minute([workers] {
      auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
          Flaky(6, {}).map(data::transforms::Stack<>()), data::DataLoaderOptions(2).workers(workers));
      std::ostringstream out;
      {
        auto it = loader->begin();
        ++it;
        out << error_of([&] { loader->begin(); }) << " | ";
        auto copy = it;  // a copy shares the position, and keeps the epoch alive too
        ++copy;
        out << ids(*it)[0] << " | " << contains(error_of([&] { loader->begin(); }), "not yet exhausted") << " | ";
        ++it;
        out << (it == loader->end() && copy == loader->end()) << " | ";
        out << read_epoch(*loader).size() << " | ";  // exhausted: a new epoch may start
      }
      {
        auto it = loader->begin();
        ++it;
      }  // destroyed mid-epoch: the next begin() starts afresh
      out << read_epoch(*loader).size();
      return out.str();
    });
    CHECK(contains(got, "DataLoader: begin() while another iterator of this loader is not yet exhausted"));
    CHECK(contains(got, "Attempted to get a new DataLoader iterator while another iterator is not yet exhausted"));
    CHECK(contains(got, "exhausted\"); run it to the end or destroy it first | 4 | "));
    CHECK(contains(got, " | 4 | 1 | 1 | 3 | 3"));
  }
}

TEST_CASE("data loader: a throwing begin() leaves no epoch; the next begin() starts one") {
  struct Refuses : data::samplers::SequentialSampler {
    using SequentialSampler::SequentialSampler;
    void reset(std::optional<size_t> n = std::nullopt) {
      if (refuse) throw std::runtime_error("the sampler refuses to reset");
      SequentialSampler::reset(n);
    }
    bool refuse = true;
  };
  for (size_t workers : {size_t(0), size_t(2)}) {
    CAPTURE(workers);
    const std::string got = within_a_minute([workers] {
      auto loader = data::make_data_loader(Flaky(4, {}).map(data::transforms::Stack<>()), Refuses(4),
                                           data::DataLoaderOptions(2).workers(workers));
      std::string what = "(nothing thrown)";
      try {
        loader->begin();
      } catch (const std::runtime_error& e) {
        what = e.what();
      }
      loader->sampler().refuse = false;
      return what + " | " + std::to_string(read_epoch(*loader).size());
    });
    CHECK(got == "the sampler refuses to reset | 2");
  }
}

// The property: in every epoch, the loop sees the sampler's batches in its order, each once,
// a batch holding a bad index as an exception in its place, and the end after the last one
// (drop_last dropping a short last batch); an early exit then a new begin() starts a whole
// new epoch; nothing hangs.
TEST_CASE("data loader: random exceptions, workers, early exits and restarts lose or repeat no batch") {
  std::mt19937 rng(20261128);
  for (int round = 0; round < 40; ++round) {
    const size_t n = rng() % 30, batch = 1 + rng() % 5, workers = rng() % 5;
    const std::optional<size_t> max_jobs = rng() % 2 ? std::optional<size_t>(1 + rng() % 6) : std::nullopt;
    const bool drop_last = rng() % 2, shuffled = rng() % 2;
    std::set<size_t> bad_get, bad_transform;
    for (size_t i = 0; i < n; ++i) {
      if (rng() % 8 == 0) bad_get.insert(i);
      if (rng() % 8 == 0) bad_transform.insert(i);
    }
    const uint32_t seed = rng();
    CAPTURE(round);
    CAPTURE(n);
    CAPTURE(batch);
    CAPTURE(workers);
    CAPTURE(drop_last);
    const std::string violations = within_a_minute([=] {
      std::mt19937 r(seed);
      manual_seed(seed);
      auto ds = Flaky(n, bad_get).map(Failing{std::make_shared<const std::set<size_t>>(bad_transform)});
      auto options = data::DataLoaderOptions(batch).workers(workers).drop_last(drop_last).max_jobs(max_jobs);
      auto run = [&](auto sampler) {
        auto loader = data::make_data_loader(ds, Logged<decltype(sampler)>(sampler), options);
        std::ostringstream bad;
        for (int epoch = 0; epoch < 4; ++epoch) {
          const bool early = r() % 3 == 0;
          const size_t limit = early ? r() % (n / batch + 2) : size_t(-1);
          const std::vector<Batch> seen = read_epoch(*loader, limit);
          std::vector<std::vector<size_t>> jobs = loader->sampler().batches();
          if (drop_last && !jobs.empty() && jobs.back().size() < batch) jobs.pop_back();
          if (seen.size() > jobs.size()) bad << "epoch " << epoch << ": more batches than the sampler gave; ";
          std::multiset<size_t> covered;
          for (size_t j = 0; j < std::min(seen.size(), jobs.size()); ++j) {
            bool throws = false;
            for (size_t i : jobs[j]) throws = throws || bad_get.count(i) || bad_transform.count(i);
            const Batch want = throws ? Batch{} : jobs[j];
            if (seen[j] != want) bad << "epoch " << epoch << ", batch " << j << " differs; ";
            covered.insert(jobs[j].begin(), jobs[j].end());
          }
          if (!early) {
            if (seen.size() != jobs.size()) bad << "epoch " << epoch << ": " << seen.size() << " of " << jobs.size() << " batches; ";
            const size_t want = drop_last ? n / batch * batch : n;
            if (covered.size() != want || std::set<size_t>(covered.begin(), covered.end()).size() != want)
              bad << "epoch " << epoch << ": the batches cover " << covered.size() << " indices, not " << want << "; ";
          }
        }
        return bad.str();
      };
      return shuffled ? run(data::samplers::RandomSampler(int64_t(n))) : run(data::samplers::SequentialSampler(n));
    });
    CHECK(violations == "");
  }
}
