// grad_flag.h - the per-thread flag that says whether ops record the graph.
//
// It sits in core/ because Tensor's in-place writes (tensor.cpp) read it: they refuse to change
// a tensor that requires grad while recording is on. autograd/ reads it before recording an
// op, and autograd/engine/grad_mode.h holds the guard that switches it off (NoGradGuard).
#pragma once

namespace heed {

// On by default, per thread, as in PyTorch.
struct GradMode {
  static bool enabled();
  static void set_enabled(bool on);
};

}  // namespace heed
