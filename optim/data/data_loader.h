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
// a new order from heed's generator) and fetches batches of batch_size indices until the
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
// they must not write shared state. An exception thrown while building a batch is rethrown
// by the loop at that batch's place. Leaving a loop early is fine: the next begin() (or the
// destructor) stops and joins the threads of the epoch before.
//
// Bad options are a heed::Error from make_data_loader naming the option: batch_size 0,
// max_jobs 0 with workers, a dataset without size() and no sampler given.
// Copying: a DataLoader owns threads and is not copyable; make_data_loader returns it in a
// std::unique_ptr, as libtorch. A throwing begin() leaves no thread running.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <map>
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
    BatchType& operator*() const { return *loader_->current_; }
    BatchType* operator->() const { return &*loader_->current_; }
    Iterator& operator++() {
      loader_->advance();
      if (!loader_->current_) loader_ = nullptr;
      return *this;
    }
    bool operator==(const Iterator& o) const { return loader_ == o.loader_; }
    bool operator!=(const Iterator& o) const { return loader_ != o.loader_; }

   private:
    friend class DataLoader;
    explicit Iterator(DataLoader* loader) : loader_(loader) {}
    DataLoader* loader_;  // null: the end
  };

  // Starts an epoch: stops the one before, resets the sampler, starts the workers and
  // fetches the first batch.
  Iterator begin() {
    stop();
    sampler_.reset(dataset_.size());
    epoch_ = std::make_unique<Epoch>();
    for (size_t w = 0; w < options_.workers(); ++w) threads_.emplace_back([this] { work(); });
    advance();
    return Iterator(current_ ? this : nullptr);
  }
  Iterator end() { return Iterator(nullptr); }

  Sampler& sampler() { return sampler_; }
  const DataLoaderOptions& options() const { return options_; }

 private:
  // One epoch's jobs: job j is the j-th batch of indices the sampler gave.
  struct Epoch {
    std::mutex mu;
    std::condition_variable cv;
    size_t next_job = 0, next_out = 0;
    bool sampler_done = false, stopping = false;
    std::map<size_t, std::optional<BatchType>> ready;
    std::map<size_t, std::exception_ptr> failed;
  };

  // The next batch of indices, or nullopt when the epoch is over (drop_last included).
  std::optional<std::vector<size_t>> next_indices() {
    auto idx = sampler_.next(options_.batch_size());
    if (idx && (idx->empty() || (options_.drop_last() && idx->size() < options_.batch_size())))
      return std::nullopt;
    return idx;
  }

  void work() {
    Epoch& e = *epoch_;
    const size_t ahead = options_.max_jobs().value_or(2 * options_.workers());
    std::unique_lock<std::mutex> lock(e.mu);
    while (true) {
      e.cv.wait(lock, [&] { return e.stopping || e.sampler_done || e.next_job - e.next_out < ahead; });
      if (e.stopping || e.sampler_done) return;
      std::optional<std::vector<size_t>> idx;
      try {
        idx = next_indices();
      } catch (...) {
        e.failed[e.next_job++] = std::current_exception();
        e.sampler_done = true;
        e.cv.notify_all();
        return;
      }
      if (!idx) {
        e.sampler_done = true;
        e.cv.notify_all();
        return;
      }
      const size_t job = e.next_job++;
      lock.unlock();
      std::optional<BatchType> batch;
      std::exception_ptr error;
      try {
        batch.emplace(dataset_.get_batch(*idx));
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (error) e.failed[job] = error;
      else e.ready[job] = std::move(batch);
      e.cv.notify_all();
    }
  }

  // current_ = the next batch in order, or nullopt at the end of the epoch.
  void advance() {
    current_.reset();
    if (options_.workers() == 0) {
      if (auto idx = next_indices()) current_.emplace(dataset_.get_batch(*idx));
      return;
    }
    Epoch& e = *epoch_;
    std::unique_lock<std::mutex> lock(e.mu);
    const size_t job = e.next_out;
    e.cv.wait(lock, [&] {
      return e.ready.count(job) || e.failed.count(job) || (e.sampler_done && job >= e.next_job);
    });
    if (auto f = e.failed.find(job); f != e.failed.end()) {
      const std::exception_ptr error = f->second;
      e.failed.erase(f);
      ++e.next_out;
      e.cv.notify_all();
      lock.unlock();
      stop();
      std::rethrow_exception(error);
    }
    if (auto r = e.ready.find(job); r != e.ready.end()) {
      current_ = std::move(r->second);
      e.ready.erase(r);
      ++e.next_out;
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
  }

  Dataset dataset_;
  Sampler sampler_;
  DataLoaderOptions options_;
  std::unique_ptr<Epoch> epoch_;
  std::vector<std::thread> threads_;
  std::optional<BatchType> current_;
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
