// grad_mode.h - whether ops record the graph, and NoGradGuard to switch it off.
//
//   { heed::NoGradGuard g; w.add_(w.grad(), -lr); }   // an update that is not recorded
//
// The flag (GradMode) is per thread, as in PyTorch, and lives in core/grad_flag.h because
// core's in-place writes read it. The backward pass itself runs with it off, unless it
// creates a graph (create_graph, autograd/engine/engine.cpp).
#pragma once

#include "../../core/grad_flag.h"

namespace heed {

// Not copyable (a guard, not a value); nothing in it throws. The destructor restores the
// mode the constructor found, also when the scope is left by an exception.
class NoGradGuard {
 public:
  NoGradGuard() : prev_(GradMode::enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

// Grad mode set to `enabled` for a scope (libtorch's AutoGradMode): the engine runs a
// create_graph pass with it on. Not copyable; the destructor restores the previous mode.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::enabled()) { GradMode::set_enabled(enabled); }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

}  // namespace heed
