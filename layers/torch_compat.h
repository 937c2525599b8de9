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
//   torch::kSum, kMean, kNone       heed::Reduction's values (autograd/ops/loss.h), in heed already
#pragma once
#include <optional>

#include <heed/heed.h>

namespace torch = heed;

namespace heed {
using std::nullopt;
using std::optional;
}  // namespace heed
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
#ifndef TORCH_CHECK
// The "" keeps the message list non-empty when TORCH_CHECK(cond) has no message (C++17).
#define TORCH_CHECK(...) HEED_TORCH_CHECK_(__VA_ARGS__, "")
#define HEED_TORCH_CHECK_(cond, ...) \
  HEED_CHECK(cond, "TORCH_CHECK", "Expected " #cond " to be true, but got false. ", __VA_ARGS__)
#endif
