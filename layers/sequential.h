// sequential.h - nn::Sequential, a chain of one-input modules, as torch::nn::Sequential, and
// nn::Functional, a function as one of them.
//
//   y = m_{n-1}( ... m_1(m_0(x)) )
//
// Children are registered as "0", "1", ..., so parameters are named "0.weight",
// "0.bias", "2.weight", ... exactly as in PyTorch and can be compared one to one.
// Any module with `Tensor forward(const Tensor&)` can be a step: push_back remembers how
// to call it (as libtorch's AnyModule does), so Module itself needs no virtual forward.
//
//   nn::Sequential mlp(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 2));
//   Tensor y = mlp(x);   // (B, 4) -> (B, 2)
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "module.h"

namespace heed::nn {

class SequentialImpl : public Module {
 public:
  SequentialImpl() = default;
  // Each argument a holder (nn::Linear(4, 8)) or a std::shared_ptr to a module.
  template <class... M>
  explicit SequentialImpl(M&&... modules) {
    (push_back(std::forward<M>(modules)), ...);
  }

  // Appends m, registered as the next index.
  template <class M>
  void push_back(std::shared_ptr<M> m) {
    static_assert(std::is_invocable_r_v<Tensor, decltype(&M::forward), M&, const Tensor&>,
                  "a Sequential step needs Tensor forward(const Tensor&)");
    std::shared_ptr<M> step = m;
    steps_.push_back([step](const Tensor& x) { return step->forward(x); });
    clones_.push_back([step](SequentialImpl& into) {
      into.push_back(std::static_pointer_cast<M>(static_cast<const Module&>(*step).clone()));
    });
    register_module(std::to_string(steps_.size() - 1), std::move(m));
  }
  template <class H, class = std::enable_if_t<std::is_base_of_v<ModuleHolderTag, std::decay_t<H>>>>
  void push_back(H&& holder) {
    push_back(holder.ptr());
  }
  size_t size() const { return steps_.size(); }
  bool is_empty() const { return steps_.empty(); }
  std::shared_ptr<Module> operator[](size_t i) const;  // heed::Error if out of range

  Tensor forward(const Tensor& x);  // x itself when empty
  // "Sequential": the children appear, one per line, in summary(). (PyTorch's repr puts
  // the whole tree in one string; here repr() is one line and summary() is the tree.)
  std::string repr() const override;

  // A deep copy (module.h): each step cloned, in order.
  std::shared_ptr<SequentialImpl> clone() const {
    return std::static_pointer_cast<SequentialImpl>(clone_module());
  }

 protected:
  std::shared_ptr<Module> clone_module() const override;

 private:
  std::vector<std::function<Tensor(const Tensor&)>> steps_;
  std::vector<std::function<void(SequentialImpl&)>> clones_;  // append a clone of step i
};
HEED_MODULE(Sequential);

// nn::Functional: a function as a step, as libtorch's torch::nn::Functional. Arguments after
// the function are bound after the input (std::bind), as libtorch binds them:
//   nn::Sequential net(nn::Linear(4, 8), nn::Functional(heed::relu),
//                      nn::Functional(heed::reshape, Shape{-1, 2, 4}),
//                      nn::Functional([](const Tensor& x) { return log_softmax(x, 2); }));
// An overloaded function's name needs a lambda (as in libtorch). It has no parameters;
// clone() copies the function, which then shares what the function captured.
class FunctionalImpl : public Module {
 public:
  using Function = std::function<Tensor(Tensor)>;
  explicit FunctionalImpl(Function function) : function_(std::move(function)) {}
  template <class F, class... Args, class = std::enable_if_t<(sizeof...(Args) > 0)>>
  explicit FunctionalImpl(F function, Args&&... args)
      : function_(std::bind(function, std::placeholders::_1, std::forward<Args>(args)...)) {}
  Tensor forward(const Tensor& x) { return function_(x); }
  std::string repr() const override { return "Functional()"; }

 protected:
  std::shared_ptr<Module> clone_module() const override {
    auto copy = std::make_shared<FunctionalImpl>(function_);
    copy->copy_state_from(*this);
    return copy;
  }

 private:
  Function function_;
};
HEED_MODULE(Functional);

}  // namespace heed::nn
