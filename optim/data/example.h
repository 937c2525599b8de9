// example.h - data::Example, one training example (or, after a collate, one batch): its data
// and its target, as libtorch's torch::data::Example<Data, Target>.
//   data::Example<> ex{x, y};                                  // Tensor data, Tensor target
//   data::Example<IndexTensor, IndexTensor> pair{src, tgt};    // token ids
// Copying copies the two members (a Tensor copy shares its storage; an IndexTensor copy
// copies its ids).
#pragma once
#include <utility>

#include "../../core/tensor.h"

namespace heed::data {

template <class Data = Tensor, class Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;
  Example() = default;
  Example(Data data, Target target) : data(std::move(data)), target(std::move(target)) {}
  Data data;
  Target target;
};

}  // namespace heed::data
