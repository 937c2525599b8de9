// module.h - nn::Module: the base of every layer. Parameters and submodules are
// registered by name, so a model can list them (named_parameters gives dotted names
// such as "encoder.lstm.weight_ih_l0"), switch train/eval, zero its gradients, print
// itself, and be saved and loaded (optim/checkpoint_file.h).
//
// Layers are used through std::shared_ptr, as libtorch's module holders are:
//   auto fc = std::make_shared<nn::Linear>(nn::LinearOptions(784, 10).bias(false));
//   Tensor y = fc->forward(x);                  // (B, 784) -> (B, 10)
//
// Each layer has its own non-virtual forward with the signature it needs (Linear takes a
// Tensor, Embedding an IndexTensor, LSTM returns outputs and states); Sequential chains
// any modules that take and return one Tensor.
//
// A layer registers what it owns in its constructor:
//   weight = register_parameter("weight", empty({out, in}));
//   lstm = register_module("lstm", std::make_shared<LSTM>(LSTMOptions(64, 128)));
// Modules form a tree (children are owned by their parent); nothing points upward.
//
// Copying a module (`nn::Linear b = *fc;`) is SHALLOW, as copying a libtorch module holder:
// the copy shares every parameter, buffer and submodule with the original (tensors are
// handles, children shared_ptrs), so a write to one is seen by the other; only its own
// training flag is separate. For an independent model, build one with the same options and
// load_state_dict(old->state_dict()), which copies the values. Exceptions: load_state_dict
// checks everything before it writes (below); a throwing forward changes no parameter.
//
// A module of your own derives from Module, registers its parts and writes a forward:
//   struct Seq2Seq : nn::Module {
//     std::shared_ptr<nn::Embedding> emb = register_module("emb", std::make_shared<nn::Embedding>(...));
//     Tensor forward(const IndexTensor& ids) { ... }
//   };   // repr() is "Seq2Seq" unless you override it; summary() lists emb under it
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../core/arg.h"  // HEED_ARG, which every module's options class uses
#include "../core/tensor.h"

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
  bool is_training() const { return training_; }
  // Zero every parameter's gradient, keeping its buffer (set_to_none = false), or drop
  // it (true, PyTorch's default since 2.0) so the next backward allocates it afresh.
  void zero_grad(bool set_to_none = true);

  // Tree printout, one line per module, with parameter counts.
  std::string summary() const;

 protected:
  Tensor register_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  Tensor register_buffer(const std::string& name, Tensor t);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    add_child(name, m);
    return m;
  }

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> m);
  void collect(const std::string& prefix, bool recurse, bool buffers, NamedTensors& out) const;
  void summary_into(const std::string& name, int depth, std::string& out) const;
  void state_dict_into(const std::string& prefix, NamedTensors& out) const;

  NamedTensors params_, buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

}  // namespace heed::nn
