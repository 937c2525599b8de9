// sequential.h - nn::Sequential, a chain of one-input modules, as torch::nn::Sequential.
//
//   y = m_{n-1}( ... m_1(m_0(x)) )
//
// Children are registered as "0", "1", ..., so parameters are named "0.weight",
// "0.bias", "2.weight", ... exactly as in PyTorch and can be compared one to one.
// Any module with `Tensor forward(const Tensor&)` can be a step: push_back remembers how
// to call it (as libtorch's AnyModule does), so Module itself needs no virtual forward.
//
//   auto mlp = std::make_shared<nn::Sequential>(
//       std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(8, 2));
//   Tensor y = mlp->forward(x);   // (B, 4) -> (B, 2)
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "module.h"

namespace heed::nn {

class Sequential : public Module {
 public:
  Sequential() = default;
  template <class... M>
  explicit Sequential(std::shared_ptr<M>... modules) {
    (push_back(std::move(modules)), ...);
  }

  // Appends m, registered as the next index.
  template <class M>
  void push_back(std::shared_ptr<M> m) {
    static_assert(std::is_invocable_r_v<Tensor, decltype(&M::forward), M&, const Tensor&>,
                  "a Sequential step needs Tensor forward(const Tensor&)");
    std::shared_ptr<M> step = m;
    steps_.push_back([step](const Tensor& x) { return step->forward(x); });
    register_module(std::to_string(steps_.size() - 1), std::move(m));
  }
  size_t size() const { return steps_.size(); }
  bool is_empty() const { return steps_.empty(); }
  std::shared_ptr<Module> operator[](size_t i) const;  // heed::Error if out of range

  Tensor forward(const Tensor& x);  // x itself when empty
  // "Sequential": the children appear, one per line, in summary(). (PyTorch's repr puts
  // the whole tree in one string; here repr() is one line and summary() is the tree.)
  std::string repr() const override;

 private:
  std::vector<std::function<Tensor(const Tensor&)>> steps_;
};

}  // namespace heed::nn
