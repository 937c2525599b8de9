// gru.cpp - nn::GRUCell and nn::GRU. The step is composed from heed ops; the time loop,
// lengths and layers are recurrent_scan.cpp's, the parameters recurrent_base.cpp's (both
// shared with nn::LSTM). nn::GRU projects the input of every step at once (gi = x W_ih^T +
// b_ih: one GEMM forward, and one each for dx and dW_ih backward) and runs only the recurrent
// half inside the loop.
#include "gru.h"

#include "../autograd/arith.h"
#include "../autograd/linear_op.h"
#include "../autograd/shape_ops.h"
#include "../autograd/unary.h"
#include "../core/error.h"
#include "recurrent_scan.h"

namespace heed::nn {

namespace {

// One GRU step from the projected input: gi = x W_ih^T + b_ih (B, 3H), h (B, H) -> h' (B, H);
// gates laid out [r | z | n].
Tensor gru_step(const Tensor& gi, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh) {
  const int64_t H = h.size(1);
  const Tensor gh = linear(h, w_hh, b_hh);  // (B, 3H) = h W_hh^T + b_hh
  // r = sigmoid(gi_r + gh_r)    z = sigmoid(gi_z + gh_z)
  const Tensor r = sigmoid(narrow(gi, 1, 0, H) + narrow(gh, 1, 0, H));
  const Tensor z = sigmoid(narrow(gi, 1, H, H) + narrow(gh, 1, H, H));
  // n = tanh(gi_n + r * gh_n)
  const Tensor n = tanh(narrow(gi, 1, 2 * H, H) + r * narrow(gh, 1, 2 * H, H));
  // h' = (1 - z) * n + z * h  =  n + z * (h - n)
  return n + z * (h - n);
}

}  // namespace

// ---------------------------------------------------------------- GRUCell

GRUCell::GRUCell(const GRUCellOptions& opts)
    : RecurrentCellBase("GRUCell", 3, opts.input_size(), opts.hidden_size(), opts.bias()),
      options(opts) {}

Tensor GRUCell::forward(const Tensor& x, const Tensor& h_in) {
  const int64_t In = options.input_size(), H = options.hidden_size();
  HEED_CHECK(x.defined() && x.dim() == 2 && x.size(1) == In, "GRUCell", "input must be (B, ", In,
             "), got ", x.defined() ? x.shape() : Shape());
  const Tensor h = h_in.defined() ? h_in : zeros({x.size(0), H});
  HEED_CHECK(h.shape() == Shape({x.size(0), H}), "GRUCell", "h must be (B, hidden_size) = ",
             Shape({x.size(0), H}), ", got ", h.shape());
  return gru_step(linear(x, weight_ih, bias_ih), h, weight_hh, bias_hh);
}

std::string GRUCell::repr() const { return cell_repr("GRUCell"); }

// ---------------------------------------------------------------- GRU

GRU::GRU(const GRUOptions& opts) : RecurrentBase("GRU", 3, opts), options(opts) {}

GRUOutput GRU::forward(const Tensor& x, const Tensor& h0, const std::vector<int64_t>& lengths) {
  const int64_t dirs = options.bidirectional() ? 2 : 1;
  const auto direction = [this, dirs](int64_t l, int d, const Tensor& x_l, const detail::State& s0,
                                      const std::vector<int64_t>& len, detail::State& last) {
    const int64_t k = l * dirs + d;
    const Tensor gi = linear(x_l, weight_ih[k], bias_ih[k]);  // (B, T, 3H), every step at once
    const auto cell = [&](const Tensor& gi_t, const detail::State& s) {
      return detail::State{gru_step(gi_t, s[0], weight_hh[k], bias_hh[k])};
    };
    return detail::scan(gi, s0, len, d == 1, cell, last);
  };
  const detail::LayersOutput r =
      detail::run_layers("GRU", x, {h0}, {"h0"}, lengths,
                         detail::scan_config(options, is_training()), direction);
  return {r.output, r.last[0]};
}

GRUOutput GRU::forward(const Tensor& x, const Tensor& h0, const Tensor& padding_mask) {
  const detail::ScanConfig cfg = detail::scan_config(options, false);
  return forward(x, h0, detail::lengths_from_mask("GRU", padding_mask, x, cfg));
}

std::string GRU::repr() const {
  return "GRU" + detail::repr_args(detail::scan_config(options, false), options.bias());
}

}  // namespace heed::nn
