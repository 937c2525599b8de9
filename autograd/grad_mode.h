// grad_mode.h - whether ops record the graph, and NoGradGuard to switch it off.
//
//   { heed::NoGradGuard g; w.add_(w.grad(), -lr); }   // an update that is not recorded
//
// The flag is per thread, as in PyTorch. The backward pass itself runs with it off.
#pragma once

namespace heed {

struct GradMode {
  static bool enabled();
  static void set_enabled(bool on);
};

class NoGradGuard {
 public:
  NoGradGuard() : prev_(GradMode::enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace heed
