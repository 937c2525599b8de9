// sequential.cpp - nn::Sequential: indexing and the chained forward.
#include "sequential.h"

#include "../core/error.h"

namespace heed::nn {

std::shared_ptr<Module> Sequential::operator[](size_t i) const {
  HEED_CHECK(i < size(), "Sequential", "index ", i, " is out of range for ", size(), " modules");
  return named_children()[i].second;
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor h = x;
  for (const auto& step : steps_) h = step(h);
  return h;
}

std::string Sequential::repr() const { return "Sequential"; }

}  // namespace heed::nn
