// anomaly_mode.h - find the op that made the first NaN (torch.autograd.detect_anomaly).
//
//   { heed::DetectAnomalyGuard guard;          // on until the end of the scope
//     Tensor loss = model->forward(x); loss.backward(); }
//   -> heed::Error "anomaly: backward of 'sqrt' (forward op #412) produced Inf in the
//      gradient of input 0, shape (4,3)"
//
// While it is on, every recorded op gets a creation index #k (counting the ops recorded
// while anomaly mode was on), its forward output is checked for NaN, and every gradient
// its backward produces for NaN and Inf. Inf in a forward output is not an error: masks
// fill scores with -inf on purpose (autograd/ops/attention/attend.h). Off by default, as in
// PyTorch; when off it costs one flag test per recorded op (cost when on: README).
// The switch is global (all threads), like PyTorch's: it is on while set_enabled(true) holds
// or any DetectAnomalyGuard lives. Guards count rather than restore a saved value, so two
// that overlap without nesting (two threads' scopes, or guards held in objects) leave it on
// exactly while one of them lives.
#pragma once
#include <cstdint>

#include "../../core/tensor.h"

namespace heed {

struct AnomalyMode {
  static bool enabled();            // set_enabled(true), or a DetectAnomalyGuard alive
  static void set_enabled(bool on);
};

// Not copyable (a guard); the destructor restores the previous mode on every exit path.
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard();
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;
};

namespace detail {
// The next creation index (only called while anomaly mode is on).
int64_t next_anomaly_index();
// heed::Error naming `op` and its index if the forward output `out` holds a NaN.
void check_forward_anomaly(const char* op, int64_t index, const Tensor& out);
// heed::Error naming `op` and its index if `grad`, the gradient for input `input`, holds
// a NaN or an Inf.
void check_backward_anomaly(const char* op, int64_t index, int input, const Tensor& grad);
}  // namespace detail

}  // namespace heed
