// clip.h - gradient clipping, as torch.nn.utils.clip_grad_norm_ and clip_grad_value_.
// Parameters without a gradient are skipped.
//
// clip_grad_norm_: the norm of all gradients taken together, as if concatenated,
//   total = (sum over every gradient element x of |x|^p)^(1/p)     (p = norm_type)
//   total = max |x|                                                (p = infinity)
// then, when coef = max_norm / (total + 1e-6) is below 1, every gradient *= coef.
// Returns `total`, the norm before clipping.
//
// A non-finite total (an inf or NaN gradient) is returned as is and, as in PyTorch,
// the scaling then spreads it (coef is 0 or NaN). With error_if_nonfinite = true it is a
// heed::Error naming clip_grad_norm_ and the norm instead, and the gradients are untouched
// (PyTorch's error_if_nonfinite; its default, like heed's, is false).
//
// clip_grad_value_: every gradient element clamped to [-clip_value, clip_value].
//
// Example (nn::utils:: is libtorch's spelling of the same functions):
//   loss.backward();
//   double norm = nn::utils::clip_grad_norm_(model->parameters(), 1.0);   // or optim::
//   opt.step();
#pragma once
#include <limits>
#include <vector>

#include "../core/tensor.h"

namespace heed::optim {

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2,
                       bool error_if_nonfinite = false);

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);

}  // namespace heed::optim

// libtorch's names: torch::nn::utils::clip_grad_norm_ and clip_grad_value_, over a list of
// parameters or over one.
namespace heed::nn::utils {
using optim::clip_grad_norm_;
using optim::clip_grad_value_;
inline double clip_grad_norm_(const Tensor& param, double max_norm, double norm_type = 2,
                              bool error_if_nonfinite = false) {
  return optim::clip_grad_norm_(std::vector<Tensor>{param}, max_norm, norm_type, error_if_nonfinite);
}
inline void clip_grad_value_(const Tensor& param, double clip_value) {
  optim::clip_grad_value_(std::vector<Tensor>{param}, clip_value);
}
}  // namespace heed::nn::utils
