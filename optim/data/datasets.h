// datasets.h - datasets::Dataset, a random-access collection of examples, and MapDataset,
// a dataset whose batches pass through a transform, as libtorch's torch::data::datasets.
//
//   struct Pairs : data::datasets::Dataset<Pairs, data::Example<IndexTensor, IndexTensor>> {
//     std::vector<std::vector<int64_t>> src, tgt;
//     ExampleType get(size_t i) override { return {IndexTensor(src[i]), IndexTensor(tgt[i])}; }
//     std::optional<size_t> size() const override { return src.size(); }
//   };
//   auto ds = Pairs{...}.map(data::transforms::Pad<data::Example<IndexTensor, IndexTensor>>(0));
//
// get_batch(indices) is get(i) for each index in order; a dataset that can do better (one
// read for the whole batch) overrides it. map(transform) wraps the dataset (moved in when
// called on a temporary, copied otherwise) in a MapDataset whose get_batch is
// transform.apply_batch(dataset.get_batch(indices)); maps chain.
// With DataLoaderOptions().workers(k > 0) (data_loader.h), get_batch and the transform run
// on k threads at once: they must only read the dataset (as libtorch requires).
// Copying a Dataset copies the subclass's members; a MapDataset holds its dataset and
// transform by value.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../../core/error.h"
#include "example.h"

namespace heed::data::datasets {

template <class Source, class Transform>
class MapDataset;

template <class Self, class SingleExample = Example<>>
class Dataset {
 public:
  using ExampleType = SingleExample;
  using BatchType = std::vector<SingleExample>;
  using BatchRequestType = std::vector<size_t>;

  virtual ~Dataset() = default;
  virtual ExampleType get(size_t index) = 0;
  virtual std::optional<size_t> size() const = 0;  // nullopt: unknown (pass a sampler)
  virtual BatchType get_batch(const BatchRequestType& indices) {
    BatchType batch;
    batch.reserve(indices.size());
    for (size_t i : indices) batch.push_back(get(i));
    return batch;
  }
  // libtorch's get_batch(0), a batch of one example (its ArrayRef takes a single index).
  BatchType get_batch(size_t index) { return get_batch(BatchRequestType{index}); }

  template <class Transform>
  MapDataset<Self, Transform> map(Transform transform) & {
    return MapDataset<Self, Transform>(static_cast<Self&>(*this), std::move(transform));
  }
  template <class Transform>
  MapDataset<Self, Transform> map(Transform transform) && {
    return MapDataset<Self, Transform>(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

template <class Source, class Transform>
class MapDataset {
 public:
  using BatchRequestType = std::vector<size_t>;
  using BatchType = decltype(std::declval<const Transform&>().apply_batch(
      std::declval<typename Source::BatchType>()));

  MapDataset(Source dataset, Transform transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}
  BatchType get_batch(const BatchRequestType& indices) {
    return transform_.apply_batch(dataset_.get_batch(indices));
  }
  BatchType get_batch(size_t index) { return get_batch(BatchRequestType{index}); }
  std::optional<size_t> size() const { return dataset_.size(); }
  const Source& dataset() const { return dataset_; }
  const Transform& transform() const { return transform_; }

  template <class Next>
  MapDataset<MapDataset, Next> map(Next next) & {
    return MapDataset<MapDataset, Next>(*this, std::move(next));
  }
  template <class Next>
  MapDataset<MapDataset, Next> map(Next next) && {
    return MapDataset<MapDataset, Next>(std::move(*this), std::move(next));
  }

 private:
  Source dataset_;
  Transform transform_;
};

// TensorDataset: example i is {data[i], target[i]}, rows of two tensors of equal size(0);
// the target type (Tensor, or IndexTensor class ids) is deduced from the constructor:
//   auto ds = data::datasets::TensorDataset(images, labels);     // labels: IndexTensor (N)
//   auto loader = data::make_data_loader(ds.map(data::transforms::Stack<>()), opts);
// libtorch's TensorDataset(tensor) (no targets) is here too: each target is undefined, and
// Stack<> leaves the batch's target undefined. A member is spelled TensorDataset<IndexTensor>
// (TensorDataset<> for Tensor targets). heed::Error naming TensorDataset when data is 0-D,
// size(0) differs between data and targets, or get(i) is past the end. Copying shares the
// two tensors (Tensor handles) or copies the ids (IndexTensor).
template <class Target = Tensor>
class TensorDataset : public Dataset<TensorDataset<Target>, Example<Tensor, Target>> {
 public:
  explicit TensorDataset(Tensor data) : data_(std::move(data)) { check(false); }
  TensorDataset(Tensor data, Target target) : data_(std::move(data)), target_(std::move(target)) {
    check(true);
  }
  Example<Tensor, Target> get(size_t index) override {
    HEED_CHECK(index < size_t(data_.size(0)), "TensorDataset", "index ", index,
               " is past the end of ", data_.size(0), " examples");
    const int64_t i = int64_t(index);
    return {data_.select(0, i), target_.defined() ? target_.select(0, i) : Target()};
  }
  std::optional<size_t> size() const override { return size_t(data_.size(0)); }
  const Tensor& data() const { return data_; }
  const Target& target() const { return target_; }

 private:
  void check(bool with_target) const {
    HEED_CHECK(data_.defined() && data_.dim() > 0, "TensorDataset", "data must have a dim 0 to ",
               "index; got ", data_.defined() ? data_.shape().str() : std::string("(undefined)"));
    if (!with_target) return;
    HEED_CHECK(target_.defined() && target_.dim() > 0 && target_.size(0) == data_.size(0),
               "TensorDataset", "data ", data_.shape(), " and target ",
               target_.defined() ? target_.shape().str() : std::string("(undefined)"),
               " must have the same size(0)");
  }
  Tensor data_;
  Target target_;
};

}  // namespace heed::data::datasets
