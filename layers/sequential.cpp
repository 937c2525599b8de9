// sequential.cpp - nn::Sequential: registration by index and the chained forward.
#include "sequential.h"

#include <string>

#include "../core/error.h"

namespace heed::nn {

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto& m : modules) push_back(m);
}

Sequential::Sequential(const std::vector<std::shared_ptr<Module>>& modules) {
  for (const auto& m : modules) push_back(m);
}

void Sequential::push_back(std::shared_ptr<Module> m) {
  register_module(std::to_string(size()), std::move(m));
}

std::shared_ptr<Module> Sequential::operator[](size_t i) const {
  HEED_CHECK(i < size(), "Sequential", "index ", i, " is out of range for ", size(), " modules");
  return named_children()[i].second;
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor h = x;
  for (const auto& [name, m] : named_children()) h = m->forward(h);
  return h;
}

std::string Sequential::repr() const { return "Sequential"; }

}  // namespace heed::nn
