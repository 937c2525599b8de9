// transforms.h - batch transforms (collates) for MapDataset (datasets.h), as libtorch's
// torch::data::transforms: apply_batch turns a vector of examples into one batch.
//
//   Stack<Example<D, T>>   stacks each example's data along a new dim 0, and each target:
//                          n examples of data (C) and target () -> data (n, C), target (n).
//                          D and T are Tensor or IndexTensor (heed::stack for both).
//                          Stack<>() takes any Example<D, T>: it learns D and T from the
//                          batch it is given (ds.map(Stack<>()) with IndexTensor targets).
//                          Targets that are all undefined (TensorDataset(x)) stay undefined.
//   Normalize<>(mean, stddev)
//                          per example, data = (data - mean) / stddev with one mean and
//                          stddev per channel (dim 0 of a (C, H, W) image), as libtorch's
//                          torch::data::transforms::Normalize; targets pass through.
//   Pad<Example<IndexTensor, IndexTensor>>(pad_id)
//                          for sequences of different lengths: each 1-D data sequence is
//                          padded with pad_id to the longest in the batch and stacked,
//                          (n, T_max); the targets likewise, (n, T'_max). The lengths are
//                          batch.data.ne(pad_id).sum(1) when pad_id never occurs in a
//                          sequence (nn::utils::pad_sequence also returns them).
// All are stateless after construction (safe on the loader's worker threads) and copy
// freely (Normalize's copies share its two constant tensors). heed::Error naming the
// transform for an empty batch, or, in Pad, an example whose data or target is undefined or
// not 1-D; Normalize's shapes that do not broadcast fail as (data - mean) does.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../../autograd/ops/arith.h"
#include "../../autograd/ops/shape.h"
#include "../../core/error.h"
#include "example.h"

namespace heed::data::transforms {

namespace detail {
// n examples -> one: data stacked along a new dim 0, targets likewise (undefined if all are).
template <class Data, class Target>
Example<Data, Target> stack_examples(std::vector<Example<Data, Target>> examples) {
  HEED_CHECK(!examples.empty(), "Stack", "an empty batch");
  std::vector<Data> data;
  std::vector<Target> target;
  data.reserve(examples.size());
  target.reserve(examples.size());
  for (auto& e : examples) {
    data.push_back(std::move(e.data));
    if (e.target.defined()) target.push_back(std::move(e.target));
  }
  HEED_CHECK(target.empty() || target.size() == data.size(), "Stack", target.size(), " of ",
             data.size(), " examples have a target; either all or none must");
  return {heed::stack(data), target.empty() ? Target() : heed::stack(target)};
}
}  // namespace detail

template <class ExampleType = Example<>>
struct Stack;

template <class Data, class Target>
struct Stack<Example<Data, Target>> {
  Example<Data, Target> apply_batch(std::vector<Example<Data, Target>> examples) const {
    return detail::stack_examples(std::move(examples));
  }
};

// Stack<>: libtorch's Stack<> is for Example<Tensor, Tensor>; heed's takes any example type.
template <>
struct Stack<Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) const {  // libtorch's own (also `{}`)
    return detail::stack_examples(std::move(examples));
  }
  template <class Data, class Target>
  Example<Data, Target> apply_batch(std::vector<Example<Data, Target>> examples) const {
    return detail::stack_examples(std::move(examples));
  }
};

// data = (data - mean) / stddev, mean and stddev (C, 1, 1): one per channel of a (C, H, W)
// example, broadcast as libtorch's. Normalize<>(0.1307, 0.3081) for one channel (MNIST),
// Normalize<>({0.485, 0.456, 0.406}, {0.229, 0.224, 0.225}) for three. Target is libtorch's
// template parameter; the batch's own target type is used whatever it is.
template <class Target = Tensor>
struct Normalize {
  Normalize(const std::vector<double>& mean, const std::vector<double>& stddev)
      : mean(channels(mean)), stddev(channels(stddev)) {}
  Normalize(double mean, double stddev) : Normalize(std::vector<double>{mean}, std::vector<double>{stddev}) {}

  Tensor operator()(const Tensor& input) const { return (input - mean) / stddev; }
  template <class T>
  std::vector<Example<Tensor, T>> apply_batch(std::vector<Example<Tensor, T>> examples) const {
    for (auto& e : examples) e.data = (*this)(e.data);
    return examples;
  }

  Tensor mean, stddev;  // (C, 1, 1) constants

 private:
  static Tensor channels(const std::vector<double>& v) {
    HEED_CHECK(!v.empty(), "Normalize", "mean and stddev need at least one value each");
    return heed::tensor(std::vector<real>(v.begin(), v.end())).reshape({-1, 1, 1});
  }
};

template <class ExampleType>
class Pad;

template <>
class Pad<Example<IndexTensor, IndexTensor>> {
 public:
  using ExampleType = Example<IndexTensor, IndexTensor>;
  explicit Pad(int64_t pad_id) : pad_id_(pad_id) {}
  int64_t pad_id() const { return pad_id_; }

  ExampleType apply_batch(const std::vector<ExampleType>& examples) const {
    HEED_CHECK(!examples.empty(), "Pad", "an empty batch");
    std::vector<const IndexTensor*> data, target;
    for (const ExampleType& e : examples) {
      data.push_back(&e.data);
      target.push_back(&e.target);
    }
    return {pad("data", data), pad("target", target)};
  }

 private:
  // (n, longest) ids: row i is sequence i, then pad_id
  IndexTensor pad(const char* what, const std::vector<const IndexTensor*>& seqs) const {
    int64_t longest = 0;
    for (size_t i = 0; i < seqs.size(); ++i) {
      HEED_CHECK(seqs[i]->defined() && seqs[i]->dim() == 1, "Pad", "example ", i, "'s ", what,
                 " has shape ", seqs[i]->defined() ? seqs[i]->shape().str() : std::string("(undefined)"),
                 "; Pad takes 1-D sequences");
      longest = std::max(longest, seqs[i]->numel());
    }
    const int64_t n = int64_t(seqs.size());
    std::vector<int64_t> ids(size_t(n * longest), pad_id_);
    for (int64_t i = 0; i < n; ++i)
      std::copy(seqs[i]->data(), seqs[i]->data() + seqs[i]->numel(), ids.begin() + i * longest);
    return IndexTensor(std::move(ids), {n, longest});
  }

  int64_t pad_id_;
};

}  // namespace heed::data::transforms
