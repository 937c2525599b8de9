// torch_compat.h - libtorch's spellings that heed does not put in <heed/heed.h>, for a
// program ported from libtorch that would rather not rename them. Opt in with one include:
//   #include <heed/layers/torch_compat.h>   // instead of #include <torch/torch.h>
// and then, unchanged:
//   struct NetImpl : torch::nn::Module { ... };  TORCH_MODULE(Net);
//   struct MyOptions { TORCH_ARG(int64_t, hidden) = 64; };
//   TORCH_CHECK(x.dim() == 2, "expected a matrix, got ", x.dim(), " dims");
// Kept out of the umbrella header (the Makefile leaves *_compat.h out of it): these names are
// libtorch's own, and a program that includes both libraries, or has a namespace torch of
// its own, must not get them unasked. Defines macros only when libtorch has not.
//
//   namespace torch = heed;         torch::Tensor, torch::nn::Linear, torch::optim::Adam, ...
//   TORCH_MODULE(Name)              HEED_MODULE(Name) (layers/module_holder.h)
//   TORCH_ARG(T, name)              HEED_ARG(T, name) (core/arg.h)
//   TORCH_CHECK(cond, message...)   a heed::Error "TORCH_CHECK: Expected cond to be true, but
//                                   got false. message..." when cond is false
//   torch::optional, c10::optional  std::optional (and nullopt), so a custom dataset's
//                                   `torch::optional<size_t> size() const override` compiles
//   AT_ASSERT(cond, message...)     TORCH_CHECK's error, "AT_ASSERT: Expected cond to be true ..."
//   torch::kSum, kMean, kNone       heed::Reduction's values (autograd/ops/loss.h), in heed already
//   torch::save(model, path)        a module's (or holder's) parameters and buffers, or an
//   torch::load(model, path)        optimizer's state and step count, in a safetensors file
//                                   (optim/safetensors.h; PyTorch reads a model's with
//                                   safetensors.torch.load_file), not libtorch's .pt archive;
//                                   load is strict: every name, each shape, nothing changed on error
//   std::cout << model              the module's summary() (heed's tree, PyTorch's names), not
//                                   libtorch's pretty_print
#pragma once
#include <cstdlib>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>

#include <heed/heed.h>

namespace torch = heed;

namespace heed {
using std::nullopt;
using std::optional;

inline void save(const nn::Module& module, const std::string& path) { safetensors::save_model(module, path); }
inline void load(nn::Module& module, const std::string& path) { safetensors::load_model(module, path); }
template <class H, class = std::enable_if_t<std::is_base_of_v<nn::ModuleHolderTag, H>>>
void save(const H& module, const std::string& path) {
  save(*module, path);
}
template <class H, class = std::enable_if_t<std::is_base_of_v<nn::ModuleHolderTag, H>>>
void load(H& module, const std::string& path) {
  load(*module, path);
}
// An optimizer's file: its state() under their names, the step count in the metadata.
inline void save(const optim::Optimizer& optimizer, const std::string& path) {
  safetensors::save_file(optimizer.state(), path, {{"step_count", std::to_string(optimizer.step_count())}});
}
inline void load(optim::Optimizer& optimizer, const std::string& path) {
  const safetensors::Contents c = safetensors::load_file(path);
  const auto it = c.metadata.find("step_count");
  char* end = nullptr;
  const long long steps = it == c.metadata.end() ? -1 : std::strtoll(it->second.c_str(), &end, 10);
  HEED_CHECK(steps >= 0 && end && *end == '\0', "torch::load", path, " holds no optimizer state "
             "(no step_count in its metadata): it was not written by torch::save(optimizer, path)");
  optimizer.load_state(c.tensors, steps);
}
}  // namespace heed

namespace heed::nn {
inline std::ostream& operator<<(std::ostream& os, const Module& module) { return os << module.summary(); }
template <class H, class = std::enable_if_t<std::is_base_of_v<ModuleHolderTag, H>>>
std::ostream& operator<<(std::ostream& os, const H& module) {
  return os << *module;
}
}  // namespace heed::nn

namespace c10 {
using std::nullopt;
using std::optional;
}  // namespace c10

#ifndef TORCH_MODULE
#define TORCH_MODULE(Name) HEED_MODULE(Name)
#endif
#ifndef TORCH_ARG
#define TORCH_ARG(T, name) HEED_ARG(T, name)
#endif
// The "" keeps the message list non-empty when TORCH_CHECK(cond) has no message (C++17).
#define HEED_COMPAT_CHECK_(name, cond, ...) \
  HEED_CHECK(cond, name, "Expected " #cond " to be true, but got false. ", __VA_ARGS__)
#ifndef TORCH_CHECK
#define TORCH_CHECK(...) HEED_COMPAT_CHECK_("TORCH_CHECK", __VA_ARGS__, "")
#endif
#ifndef AT_ASSERT
#define AT_ASSERT(...) HEED_COMPAT_CHECK_("AT_ASSERT", __VA_ARGS__, "")
#endif
