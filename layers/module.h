// module.h - nn::Module: the base of every layer. Parameters and submodules are
// registered by name, so a model can list them (named_parameters gives dotted names
// such as "encoder.lstm.weight_ih_l0"), switch train/eval, zero its gradients, print
// itself, and be saved and loaded (optim/checkpoint_file.h).
//
// Every layer is a module class `XImpl` and a holder `X` (module_holder.h), as libtorch's
// LinearImpl and Linear: the holder owns the module through a std::shared_ptr.
//   nn::Linear fc(nn::LinearOptions(784, 10).bias(false));
//   Tensor y = fc(x);                           // fc->forward(x): (B, 784) -> (B, 10)
//   fc->weight;                                 // (10, 784)
//
// Each layer has its own non-virtual forward with the signature it needs (Linear takes a
// Tensor, Embedding an IndexTensor, LSTM returns outputs and states); Sequential chains
// any modules that take and return one Tensor.
//
// A layer registers what it owns in its constructor:
//   weight = register_parameter("weight", empty({out, in}));
//   lstm = register_module("lstm", nn::LSTM(nn::LSTMOptions(64, 128)));
// Modules form a tree (children are owned by their parent); nothing points upward.
//
// Copying. A HOLDER copies shallowly, as libtorch's: `nn::Linear b = fc;` is the same
// module under a second name. A MODULE does not copy: Module's copy constructor and
// assignment are deleted, so `nn::LinearImpl b = *fc;` does not compile (in libtorch it
// compiles and silently shares every parameter). For an independent model, clone():
//   nn::Linear b = fc->clone();   // new parameters with fc's values, fc's training flags
// The copy's parameters, buffers and submodules are new tensors and new modules; tensors
// tied inside the model stay tied in the copy (the constructor ties them again). Every heed
// layer implements clone() (nn::Cloneable below); a module of your own derives from
// Cloneable<Self> to get it, else its clone() is a heed::Error naming it.
// Exceptions: load_state_dict checks everything before it writes (below); a throwing
// forward changes no parameter; a throwing clone() leaves the original untouched.
//
// A module of your own derives from Module, registers its parts and writes a forward:
//   struct Seq2SeqImpl : nn::Module {
//     nn::Embedding emb = register_module("emb", nn::Embedding(...));
//     Tensor forward(const IndexTensor& ids) { ... }
//   };
//   HEED_MODULE(Seq2Seq);   // the holder: Seq2Seq model(...); model(ids)
// repr() is "Seq2Seq" unless you override it (a trailing "Impl" is dropped); summary()
// lists emb under it.
#pragma once
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../core/arg.h"  // HEED_ARG, which every module's options class uses
#include "../core/tensor.h"
#include "module_holder.h"

namespace heed::nn {

using heed::NamedTensors;  // core/tensor.h

// What load_state_dict did not match, as PyTorch's _IncompatibleKeys: the model's keys the
// given dict lacks, and the dict's keys the model lacks, each in order.
struct IncompatibleKeys {
  std::vector<std::string> missing_keys, unexpected_keys;
  bool empty() const { return missing_keys.empty() && unexpected_keys.empty(); }
};

class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;             // see "Copying" above: clone() copies deeply
  Module& operator=(const Module&) = delete;
  virtual ~Module() = default;

  // The layer as PyTorch prints it, e.g. "Linear(in_features=4, out_features=2, bias=True)".
  // Every heed layer overrides it; a user's module need not: the default is its class
  // name without namespaces ("Seq2Seq"), as torch prints a module that has no extra_repr.
  virtual std::string repr() const;
  // Registration order, dotted names. A tensor registered in two places (tied weights, e.g.
  // a language model's output layer sharing its embedding) is listed once, under the first
  // name, as PyTorch's named_parameters does: an optimizer or clip_grad_norm_ sees it once.
  NamedTensors named_parameters(bool recurse = true) const;
  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;     // non-trainable saved state
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const {
    return children_;
  }
  int64_t num_parameters() const;  // total elements over all parameters

  // Every parameter and buffer by dotted name, as PyTorch's state_dict orders them: a
  // module's own parameters, then its own buffers, then each child's in registration order.
  // A tied tensor appears under each of its names (PyTorch's state_dict keeps both keys).
  // The tensors are the model's own (not copies): read them, or save them
  // (heed::safetensors::save_file, save_checkpoint).
  NamedTensors state_dict() const;
  // Copies the values of `dict` into the parameters and buffers of the same names, without
  // recording autograd history; the model keeps its own tensors, so an optimizer built
  // before stays valid. Returns the model's keys missing from `dict` and the keys of `dict`
  // the model lacks. With strict, either being non-empty is a heed::Error listing them.
  // A shape mismatch, or a name twice in `dict`, is always an error. Everything is checked
  // before any value changes: on error the model is untouched.
  //   model->load_state_dict(heed::safetensors::load_file("gpt.safetensors").tensors);
  IncompatibleKeys load_state_dict(const NamedTensors& dict, bool strict = true);

  virtual void train(bool on = true);  // recursive
  void eval() { train(false); }
  // libtorch's model->to(device): heed's modules are on the CPU; another device is a heed::Error.
  void to(const Device& device) { heed::detail::check_device("Module::to", device); }
  bool is_training() const { return training_; }
  // Zero every parameter's gradient, keeping its buffer (set_to_none = false), or drop
  // it (true, PyTorch's default since 2.0) so the next backward allocates it afresh.
  void zero_grad(bool set_to_none = true);

  // Tree printout, one line per module, with parameter counts.
  std::string summary() const;

  // A deep copy (see "Copying" above). Cloneable<XImpl>::clone returns std::shared_ptr<XImpl>,
  // which a holder takes: `nn::Linear b = fc->clone();`. heed::Error naming the module if it
  // does not implement clone_module().
  std::shared_ptr<Module> clone() const { return clone_module(); }

 protected:
  // The deep copy behind clone(); Cloneable implements it. Default: heed::Error.
  virtual std::shared_ptr<Module> clone_module() const;
  // Makes this module, built afresh with the same structure as `from` (the same
  // constructor arguments), equal to it: every parameter's and buffer's value and
  // requires_grad, every module's training flag, recursively. heed::Error naming `from` and
  // the tensor if the structures differ, checked before anything is written.
  void copy_state_from(const Module& from);

  Tensor register_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  Tensor register_buffer(const std::string& name, Tensor t);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    add_child(name, m);
    return m;
  }
  // A holder: registers its module and returns the holder (the same module).
  template <class H, class = std::enable_if_t<std::is_base_of_v<ModuleHolderTag, H>>>
  H register_module(const std::string& name, H holder) {
    add_child(name, holder.ptr());
    return holder;
  }

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> m);
  void collect(const std::string& prefix, bool recurse, bool buffers, NamedTensors& out) const;
  void summary_into(const std::string& name, int depth, std::string& out) const;
  void state_dict_into(const std::string& prefix, NamedTensors& out) const;
  void check_same_structure(const Module& from, const std::string& prefix) const;
  void copy_values_from(const Module& from);

  NamedTensors params_, buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  // The names above, for a duplicate check in O(1) per registration.
  // heed::Error naming `op` for an empty or dotted name, or one already registered
  void check_unused(const char* op, const std::string& name) const;
  std::unordered_set<std::string> param_names_, buffer_names_, child_names_;
  bool training_ = true;
};

namespace detail {
template <class T, class = void>
struct has_options : std::false_type {};
template <class T>
struct has_options<T, std::void_t<decltype(std::declval<const T&>().options)>> : std::true_type {};
}  // namespace detail

// A module that clone() can copy: every heed layer derives from it, as libtorch's from
// torch::nn::Cloneable. clone() builds a new Derived from the same constructor arguments,
// Derived(options) where the module keeps its `options` (every heed layer), else Derived(),
// then copies the state into it (copy_state_from). A module built some other way overrides
// clone_module() itself. `Base` is Module or a module base class (the recurrent layers').
template <class Derived, class Base = Module>
class Cloneable : public Base {
 public:
  using Base::Base;
  std::shared_ptr<Derived> clone() const {
    return std::static_pointer_cast<Derived>(clone_module());
  }

 protected:
  std::shared_ptr<Module> clone_module() const override {
    const Derived& self = static_cast<const Derived&>(*this);
    std::shared_ptr<Derived> copy;
    if constexpr (detail::has_options<Derived>::value) {
      copy = std::make_shared<Derived>(self.options);
    } else {
      static_assert(std::is_default_constructible_v<Derived>,
                    "Cloneable<M>: M has neither `options` nor a default constructor; override "
                    "clone_module() to build the copy");
      copy = std::make_shared<Derived>();
    }
    copy->copy_state_from(self);
    return copy;
  }
};

}  // namespace heed::nn
