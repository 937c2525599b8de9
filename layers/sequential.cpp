// sequential.cpp - nn::Sequential: indexing and the chained forward.
#include "sequential.h"

#include "../core/error.h"

namespace heed::nn {

std::shared_ptr<Module> SequentialImpl::operator[](size_t i) const {
  HEED_CHECK(i < size(), "Sequential", "index ", i, " is out of range for ", size(), " modules");
  return named_children()[i].second;
}

Tensor SequentialImpl::forward(const Tensor& x) {
  Tensor h = x;
  for (const auto& step : steps_) h = step(h);
  return h;
}

std::string SequentialImpl::repr() const { return "Sequential"; }

std::shared_ptr<Module> SequentialImpl::clone_module() const {
  auto copy = std::make_shared<SequentialImpl>();
  for (const auto& clone_step : clones_) clone_step(*copy);
  copy->copy_state_from(*this);  // the training flags, Sequential's own included
  return copy;
}

}  // namespace heed::nn
