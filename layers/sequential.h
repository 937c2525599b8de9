// sequential.h - nn::Sequential, a chain of one-input modules, as torch::nn::Sequential.
//
//   y = m_{n-1}( ... m_1(m_0(x)) )
//
// Children are registered as "0", "1", ..., so parameters are named "0.weight",
// "0.bias", "2.weight", ... exactly as in PyTorch and can be compared one to one.
// Each child is called through Module::forward(const Tensor&).
//
// Example:
//   auto mlp = std::make_shared<nn::Sequential>(nn::Sequential{
//       std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(8, 2)});
//   Tensor y = mlp->forward(x);   // (B, 4) -> (B, 2)
#pragma once
#include <initializer_list>
#include <memory>
#include <vector>

#include "module.h"

namespace heed::nn {

class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  explicit Sequential(const std::vector<std::shared_ptr<Module>>& modules);

  void push_back(std::shared_ptr<Module> m);  // registered as the next index
  size_t size() const { return named_children().size(); }
  bool is_empty() const { return size() == 0; }
  std::shared_ptr<Module> operator[](size_t i) const;  // heed::Error if out of range

  Tensor forward(const Tensor& x) override;  // x itself when empty
  // "Sequential": the children appear, one per line, in summary(). (PyTorch's repr puts
  // the whole tree in one string; here repr() is one line and summary() is the tree.)
  std::string repr() const override;
};

}  // namespace heed::nn
