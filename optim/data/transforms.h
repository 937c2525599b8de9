// transforms.h - batch transforms (collates) for MapDataset (datasets.h), as libtorch's
// torch::data::transforms: apply_batch turns a vector of examples into one batch.
//
//   Stack<Example<D, T>>   stacks each example's data along a new dim 0, and each target:
//                          n examples of data (C) and target () -> data (n, C), target (n).
//                          D and T are Tensor or IndexTensor (heed::stack for both).
//   Pad<Example<IndexTensor, IndexTensor>>(pad_id)
//                          for sequences of different lengths: each 1-D data sequence is
//                          padded with pad_id to the longest in the batch and stacked,
//                          (n, T_max); the targets likewise, (n, T'_max). The lengths are
//                          batch.data.ne(pad_id).sum(1) when pad_id never occurs in a
//                          sequence (nn::utils::pad_sequence also returns them).
// Both are stateless (safe on the loader's worker threads) and copy freely. heed::Error
// naming the transform for an empty batch, or, in Pad, an example whose data or target is
// undefined or not 1-D.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../../autograd/shape_ops.h"
#include "../../core/error.h"
#include "example.h"

namespace heed::data::transforms {

template <class ExampleType = Example<>>
struct Stack;

template <class Data, class Target>
struct Stack<Example<Data, Target>> {
  Example<Data, Target> apply_batch(std::vector<Example<Data, Target>> examples) const {
    HEED_CHECK(!examples.empty(), "Stack", "an empty batch");
    std::vector<Data> data;
    std::vector<Target> target;
    data.reserve(examples.size());
    target.reserve(examples.size());
    for (auto& e : examples) {
      data.push_back(std::move(e.data));
      target.push_back(std::move(e.target));
    }
    return {heed::stack(data), heed::stack(target)};
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
