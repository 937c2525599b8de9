// function.h - custom differentiable functions, as libtorch's torch::autograd::Function.
//
//   struct MulConstant : heed::autograd::Function<MulConstant> {
//     // y = x * c            dx = dy * c
//     static Tensor forward(AutogradContext* ctx, Tensor x, double c) {
//       ctx->saved_data["c"] = c;
//       return x * c;                      // runs with grad recording off
//     }
//     static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
//       return {grad_outputs[0] * ctx->saved_data["c"].toDouble(), Tensor()};  // one per argument
//     }
//   };
//   Tensor y = MulConstant::apply(x, 2.0);
//
// apply(args...) runs T::forward(ctx, args...) under NoGradGuard, then records one node
// (node.h, record()) whose inputs are the Tensor arguments. Its backward calls
// T::backward(ctx, {dy}), which returns one gradient per forward argument (an undefined
// Tensor for an argument that is not a tensor or needs no gradient; a defined one for a
// non-tensor argument is a heed::Error, as in libtorch). A backward written
// with heed ops supports double backward: under create_graph it runs with grad mode on, so
// the ops it calls are recorded (as in PyTorch). forward returns one Tensor, or a
// tensor_list: then apply returns the list, each output a view of one packed node whose
// backward hands T::backward one gradient per output (zeros for an output not used).
//
// AutogradContext (one per apply, shared by forward and backward):
//   save_for_backward({...}) / get_saved_variables()   tensors, with the version check: an
//       in-place write to a saved tensor between forward and backward raises heed::Error
//   saved_data["key"] = value                          numbers, flags, tensors, int lists
//   mark_non_differentiable({out})                     the output gets no gradient
//   needs_input_grad(i)                                during backward: argument i needs one
// Copying a context is not allowed (apply holds it by shared_ptr). A throwing forward
// records nothing; a throwing backward leaves the pass's gradients as the engine does.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../../core/error.h"
#include "grad_mode.h"
#include "node.h"

namespace heed {
namespace autograd {

using tensor_list = std::vector<Tensor>;
using variable_list = std::vector<Tensor>;

// A value kept in saved_data (libtorch's IValue, for the kinds a Function keeps). Reading it
// as another kind is a heed::Error naming both.
class SavedValue {
 public:
  SavedValue() = default;
  SavedValue(double v) : kind_(kDouble), d_(v) {}
  SavedValue(float v) : kind_(kDouble), d_(v) {}
  SavedValue(int64_t v) : kind_(kInt), i_(v) {}
  SavedValue(int v) : kind_(kInt), i_(v) {}
  SavedValue(bool v) : kind_(kBool), i_(v) {}
  SavedValue(Tensor t) : kind_(kTensor), t_(std::move(t)) {}
  SavedValue(std::string s) : kind_(kString), s_(std::move(s)) {}
  SavedValue(const char* s) : kind_(kString), s_(s) {}
  SavedValue(std::vector<int64_t> v) : kind_(kIntList), l_(std::move(v)) {}

  double toDouble() const;  // a double (or an int, converted)
  int64_t toInt() const;
  bool toBool() const;
  Tensor toTensor() const;
  const std::string& toStringRef() const;
  const std::vector<int64_t>& toIntVector() const;

 private:
  enum Kind { kNone, kDouble, kInt, kBool, kTensor, kString, kIntList };
  [[noreturn]] void fail_kind(const char* wanted) const;
  Kind kind_ = kNone;
  double d_ = 0;
  int64_t i_ = 0;
  Tensor t_;
  std::string s_;
  std::vector<int64_t> l_;
};

class AutogradContext;
namespace detail {
// Records the node of one apply(): its backward calls `backward` (T::backward).
void record_function(const std::shared_ptr<AutogradContext>& ctx, const Tensor& out,
                     const std::vector<Tensor>& inputs, int n_args,
                     std::vector<Tensor> (*backward)(AutogradContext*, std::vector<Tensor>));
// The same for a forward that returned several outputs: returns them, recorded.
std::vector<Tensor> record_function_list(const std::shared_ptr<AutogradContext>& ctx,
                                         const std::vector<Tensor>& outs,
                                         const std::vector<Tensor>& inputs, int n_args,
                                         std::vector<Tensor> (*backward)(AutogradContext*,
                                                                         std::vector<Tensor>));
}  // namespace detail

class AutogradContext {
 public:
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  void save_for_backward(std::vector<Tensor> to_save);
  // The saved tensors, each checked against its version when saved. Under create_graph the
  // forward's own output comes back as the node's output (Grads::output), so a backward that
  // reads it is differentiable through it.
  std::vector<Tensor> get_saved_variables() const;
  void mark_non_differentiable(const std::vector<Tensor>& outputs);
  // Only during backward: argument i of forward needs a gradient (false for an argument
  // that is not a tensor); heed::Error for i outside [0, number of arguments).
  bool needs_input_grad(int i) const;

  std::unordered_map<std::string, SavedValue> saved_data;

 private:
  template <class T>
  friend struct Function;
  friend void detail::record_function(const std::shared_ptr<AutogradContext>&, const Tensor&,
                                      const std::vector<Tensor>&, int,
                                      std::vector<Tensor> (*)(AutogradContext*, std::vector<Tensor>));
  friend std::vector<Tensor> detail::record_function_list(
      const std::shared_ptr<AutogradContext>&, const std::vector<Tensor>&,
      const std::vector<Tensor>&, int, std::vector<Tensor> (*)(AutogradContext*, std::vector<Tensor>));
  void adopt_output(const Tensor& out);  // after forward: saved outputs held detached
  void hand_out(std::vector<Tensor> r, Grads& g) const;  // T::backward's gradients into g
  std::vector<SavedTensor> saved_;
  std::vector<char> saved_is_output_;
  std::vector<TensorImpl*> non_differentiable_;
  std::vector<int> arg_of_input_;  // node input k is forward argument arg_of_input_[k]
  int n_args_ = 0;                 // forward's arguments, tensors or not
  const Grads* grads_ = nullptr;   // during backward
};

namespace detail {
inline void collect(std::vector<Tensor>&, std::vector<int>&, int) {}
template <class A, class... Rest>
void collect(std::vector<Tensor>& tensors, std::vector<int>& where, int i, const A& a,
             const Rest&... rest) {
  if constexpr (std::is_same_v<std::decay_t<A>, Tensor>) {
    tensors.push_back(a);
    where.push_back(i);
  }
  collect(tensors, where, i + 1, rest...);
}
}  // namespace detail

template <class T>
struct Function {
  template <class... Args>
  static auto apply(Args&&... args) {
    auto ctx = std::make_shared<AutogradContext>();
    std::vector<Tensor> inputs;
    detail::collect(inputs, ctx->arg_of_input_, 0, args...);
    using Out = decltype(T::forward(ctx.get(), std::forward<Args>(args)...));
    Out out;
    {
      NoGradGuard no_grad;  // forward is computed, not recorded
      out = T::forward(ctx.get(), std::forward<Args>(args)...);
    }
    auto backward = [](AutogradContext* c, std::vector<Tensor> g) { return T::backward(c, std::move(g)); };
    const int n_args = static_cast<int>(sizeof...(Args));
    if constexpr (std::is_same_v<Out, std::vector<Tensor>>) {
      return detail::record_function_list(ctx, out, inputs, n_args, backward);
    } else {
      HEED_CHECK(out.defined(), "autograd::Function", "forward returned an undefined tensor");
      for (const Tensor& x : inputs)  // an input returned as is becomes a new handle
        if (x.defined() && x.impl() == out.impl()) out = out.detach();
      detail::record_function(ctx, out, inputs, n_args, backward);
      return Tensor(out);
    }
  }
};

}  // namespace autograd
}  // namespace heed
