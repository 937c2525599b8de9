// data_loader.h - make_data_loader and DataLoader: batches of a dataset, in the order a
// sampler gives, optionally fetched ahead by worker threads, as libtorch's torch::data:
//
//   auto ds = MyDataset(...).map(data::transforms::Stack<>());
//   auto loader = data::make_data_loader<data::samplers::RandomSampler>(
//       std::move(ds), data::DataLoaderOptions().batch_size(64).drop_last(true).workers(2));
//   for (int epoch = 0; epoch < E; ++epoch)
//     for (auto& batch : *loader) { ... batch.data ... batch.target ... }
//
// Each `for` over *loader is one epoch: begin() calls sampler.reset() (RandomSampler draws
// a new order from heed's generator) and batches of batch_size indices are fetched until the
// sampler runs out; drop_last drops a last, smaller batch. The default sampler is
// RandomSampler; make_data_loader<samplers::SequentialSampler>(...) keeps the dataset's
// order; make_data_loader(ds, sampler, options) takes any sampler object (samplers.h), such as
// data::DistributedSampler (call loader->sampler().set_epoch(e) before each epoch).
//
// Workers: workers(0), the default, fetches each batch on the calling thread when the loop
// asks for it. workers(k) starts k threads at begin(); each draws the next indices from the
// sampler (under a lock, so in the sampler's order) and builds that batch, up to max_jobs
// (default 2k) batches ahead. Batches come out in the sampler's order whatever the threads'
// timing, so a seeded run gives the same batches with any k (enforce_ordering cannot be
// turned off). get_batch and the transforms then run on k threads at once, as in libtorch:
// they must not write shared state.
//
// Iterators are input iterators, as libtorch's: copies share the loader's one position.
// begin() fetches nothing; the first batch is fetched when the iterator is first compared
// or dereferenced (as libtorch's lazily initialised iterator), each later one by ++.
//
// An exception thrown while building a batch (get_batch, a transform, the sampler) is
// rethrown, unchanged, by the call that fetches that batch (the comparison with end() or
// ++), with any number of workers. That batch is lost; the epoch goes on: the next ++ fetches
// the batch after it, and dereferencing the iterator before that is a heed::Error (as is
// dereferencing or advancing the end). So each index of an epoch is either in exactly one
// batch the loop sees or in one batch that threw.
//
// Leaving a loop early is fine: once no iterator of the epoch is alive, the next begin() (or
// the destructor) stops and joins that epoch's threads. begin() while an iterator of this
// loader is alive and not at the end of its epoch is a heed::Error naming DataLoader, as
// libtorch refuses it ("Attempted to get a new DataLoader iterator while another iterator is
// not yet exhausted"); heed does not restart an epoch under a running loop. Iterators must
// not outlive their loader. A DataLoader is used from one thread at a time.
//
// Bad options are a heed::Error from make_data_loader naming the option: batch_size 0,
// max_jobs 0 with workers, a dataset without size() and no sampler given.
// Copying: a DataLoader owns threads and is not copyable; make_data_loader returns it in a
// std::unique_ptr, as libtorch. A throwing begin() (the sampler's reset, a thread that cannot
// start) leaves no thread running and no epoch: the next begin() starts afresh.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/arg.h"
#include "../../core/error.h"
#include "samplers.h"

namespace heed::data {

class DataLoaderOptions {
 public:
  DataLoaderOptions() = default;
  DataLoaderOptions(size_t batch_size) : batch_size_(batch_size) {}  // implicit, as libtorch
  HEED_ARG(size_t, batch_size) = 1;
  HEED_ARG(size_t, workers) = 0;
  HEED_ARG(bool, drop_last) = false;
  HEED_ARG(std::optional<size_t>, max_jobs);  // batches in flight; default 2 * workers
  HEED_ARG(bool, enforce_ordering) = true;    // must stay true: batches keep the sampler's order
};

template <class Dataset, class Sampler>
class DataLoader {
 public:
  using BatchType = typename Dataset::BatchType;

  DataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : dataset_(std::move(dataset)), sampler_(std::move(sampler)), options_(std::move(options)) {
    HEED_CHECK(options_.batch_size() >= 1, "DataLoader", "batch_size must be >= 1, got 0");
    HEED_CHECK(options_.enforce_ordering(), "DataLoader",
               "enforce_ordering(false) is not supported: batches always keep the sampler's order");
    HEED_CHECK(options_.workers() == 0 || options_.max_jobs().value_or(1) >= 1, "DataLoader",
               "max_jobs must be >= 1 with ", options_.workers(), " workers, got 0");
  }
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;
  ~DataLoader() { stop(); }

  class Iterator {
   public:
    Iterator(const Iterator& o) : loader_(o.loader_) { hold(); }
    Iterator& operator=(const Iterator& o) {
      if (this != &o) release(), loader_ = o.loader_, hold();
      return *this;
    }
    ~Iterator() { release(); }

    BatchType& operator*() const { return loader_checked("dereferencing")->batch(); }
    BatchType* operator->() const { return &**this; }
    // Fetches the next batch; what building it threw is rethrown, and the iterator stays on
    // the epoch (a ++ after it fetches the batch after the lost one).
    Iterator& operator++() {
      loader_checked("++")->step();
      return *this;
    }
    // Equal: both at the end of the epoch, or both on the same loader's position. Fetches
    // the first batch of a fresh begin().
    bool operator==(const Iterator& o) const {
      const bool end = at_end(), o_end = o.at_end();
      return end == o_end && (end || loader_ == o.loader_);
    }
    bool operator!=(const Iterator& o) const { return !(*this == o); }

   private:
    friend class DataLoader;
    explicit Iterator(DataLoader* loader) : loader_(loader) { hold(); }
    void hold() const {
      if (loader_) ++loader_->live_;
    }
    void release() const {
      if (loader_) --loader_->live_;
    }
    DataLoader* loader_checked(const char* what) const {
      HEED_CHECK(loader_, "DataLoader", what, " the end() iterator");
      return loader_;
    }
    bool at_end() const {
      if (!loader_) return true;
      if (loader_->at_ == At::pending) loader_->fetch();
      return loader_->at_ == At::end;
    }
    DataLoader* loader_;  // null: end()
  };

  // Starts an epoch: stops the one before, resets the sampler and starts the workers.
  Iterator begin() {
    HEED_CHECK(live_ == 0 || at_ == At::end, "DataLoader",
               "begin() while another iterator of this loader is not yet exhausted (libtorch: "
               "\"Attempted to get a new DataLoader iterator while another iterator is not yet "
               "exhausted\"); run it to the end or destroy it first");
    stop();
    at_ = At::end;
    current_.reset();
    sampler_.reset(dataset_.size());
    if (options_.workers() > 0) {
      epoch_ = std::make_unique<Epoch>(options_.max_jobs().value_or(2 * options_.workers()));
      try {
        for (size_t w = 0; w < options_.workers(); ++w) threads_.emplace_back([this] { work(); });
      } catch (...) {
        stop();
        throw;
      }
    }
    at_ = At::pending;
    return Iterator(this);
  }
  Iterator end() { return Iterator(nullptr); }

  Sampler& sampler() { return sampler_; }
  const DataLoaderOptions& options() const { return options_; }

 private:
  // Where the epoch's one position is: not fetched yet (after begin()), on a batch, on a
  // batch that threw, or past the last batch (also: no epoch started).
  enum class At { pending, batch, lost, end };

  // Job j (the j-th batch of indices the sampler gave) lives in slots[j % slots.size()] from
  // the time a worker takes it until the loop takes its batch: at most slots.size() jobs are
  // in flight, so no two share a slot, and storing a result allocates nothing.
  struct Slot {
    bool done = false;
    std::optional<BatchType> batch;
    std::exception_ptr error;  // what building the batch threw
  };
  struct Epoch {
    explicit Epoch(size_t jobs) : slots(jobs) {}
    std::mutex mu;
    std::condition_variable cv;
    size_t next_job = 0, next_out = 0;
    bool sampler_done = false, stopping = false;
    std::vector<Slot> slots;
  };

  BatchType& batch() {
    if (at_ == At::pending) fetch();
    HEED_CHECK(at_ != At::lost, "DataLoader",
               "dereferencing an iterator whose batch threw when it was built; ++ fetches the next one");
    HEED_CHECK(at_ == At::batch, "DataLoader", "dereferencing an iterator at the end of its epoch");
    return *current_;
  }
  void step() {
    if (at_ == At::pending) fetch();  // the first batch, which ++ steps over
    HEED_CHECK(at_ != At::end, "DataLoader", "++ on an iterator at the end of its epoch");
    fetch();
  }
  // The next batch into current_ (at_ = batch), or at_ = end; at_ = lost if building it threw.
  void fetch() {
    current_.reset();
    at_ = At::lost;
    std::optional<BatchType> b = next_batch();
    at_ = b ? At::batch : At::end;
    current_ = std::move(b);
  }

  // The next batch of indices, or nullopt when the epoch is over (drop_last included).
  std::optional<std::vector<size_t>> next_indices() {
    auto idx = sampler_.next(options_.batch_size());
    if (idx && (idx->empty() || (options_.drop_last() && idx->size() < options_.batch_size())))
      return std::nullopt;
    return idx;
  }

  // The next batch in the sampler's order, nullopt at the end; rethrows what building it threw.
  std::optional<BatchType> next_batch() {
    if (options_.workers() == 0) {
      std::optional<std::vector<size_t>> idx = next_indices();
      if (!idx) return std::nullopt;
      return dataset_.get_batch(*idx);
    }
    Epoch& e = *epoch_;
    std::unique_lock<std::mutex> lock(e.mu);
    const size_t job = e.next_out;
    Slot& slot = e.slots[job % e.slots.size()];
    e.cv.wait(lock, [&] { return slot.done || (e.sampler_done && job >= e.next_job); });
    if (!slot.done) return std::nullopt;
    std::optional<BatchType> batch = std::move(slot.batch);
    const std::exception_ptr error = slot.error;
    slot.done = false, slot.batch.reset(), slot.error = nullptr;
    ++e.next_out;
    lock.unlock();
    e.cv.notify_all();
    if (error) std::rethrow_exception(error);
    return batch;
  }

  // A worker: takes the next job, builds its batch outside the lock, stores the batch or what
  // building it threw in the job's slot. Nothing thrown leaves the thread.
  void work() {
    Epoch& e = *epoch_;
    std::unique_lock<std::mutex> lock(e.mu);
    while (true) {
      e.cv.wait(lock, [&] {
        return e.stopping || e.sampler_done || e.next_job - e.next_out < e.slots.size();
      });
      if (e.stopping || e.sampler_done) return;
      const size_t job = e.next_job;
      Slot& slot = e.slots[job % e.slots.size()];
      std::optional<BatchType> batch;
      std::exception_ptr error;
      std::optional<std::vector<size_t>> idx;
      try {
        idx = next_indices();  // under the lock: jobs take the sampler's batches in order
      } catch (...) {
        error = std::current_exception();
      }
      if (!idx && !error) {
        e.sampler_done = true;
        e.cv.notify_all();
        return;
      }
      ++e.next_job;
      if (!error) {
        lock.unlock();
        try {
          batch.emplace(dataset_.get_batch(*idx));
        } catch (...) {
          error = std::current_exception();
        }
        lock.lock();
      }
      try {
        slot.batch = std::move(batch);
      } catch (...) {  // a BatchType whose move throws
        error = std::current_exception();
      }
      slot.error = error;
      slot.done = true;
      e.cv.notify_all();
    }
  }

  void stop() {
    if (epoch_) {
      {
        std::lock_guard<std::mutex> lock(epoch_->mu);
        epoch_->stopping = true;
      }
      epoch_->cv.notify_all();
    }
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    epoch_.reset();
  }

  Dataset dataset_;
  Sampler sampler_;
  DataLoaderOptions options_;
  std::unique_ptr<Epoch> epoch_;  // with workers: the running epoch's jobs
  std::vector<std::thread> threads_;
  std::optional<BatchType> current_;
  At at_ = At::end;
  size_t live_ = 0;  // iterators (not end()) of this loader alive
};

namespace detail {
template <class S>
using sampler_next_t = decltype(std::declval<S&>().next(size_t(1)));
}  // namespace detail

// A loader over `dataset` drawing indices from `sampler` (any class with reset and next).
template <class Dataset, class Sampler, class = detail::sampler_next_t<Sampler>>
std::unique_ptr<DataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset, Sampler sampler,
                                                              DataLoaderOptions options = {}) {
  return std::make_unique<DataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler),
                                                        std::move(options));
}

// A loader whose Sampler is made from the dataset's size (RandomSampler by default);
// options may be a batch size alone: make_data_loader(std::move(ds), 64).
template <class Sampler = samplers::RandomSampler, class Dataset>
std::unique_ptr<DataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset,
                                                              DataLoaderOptions options = {}) {
  const std::optional<size_t> size = dataset.size();
  HEED_CHECK(size.has_value(), "make_data_loader",
             "the dataset's size() is unknown (nullopt): pass a sampler object");
  Sampler sampler(*size);
  return make_data_loader(std::move(dataset), std::move(sampler), std::move(options));
}

}  // namespace heed::data
