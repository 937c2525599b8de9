// lstm.cpp - nn::LSTMCell and nn::LSTM: forward and repr (the parameters and their PyTorch
// initialisation are recurrent_base.cpp's, shared with nn::GRU).
// LSTMCell's step is the fused heed::lstm_cell; each direction of each LSTM layer is one fused
// heed::lstm_layer (autograd/ops/lstm_layer.h: the input projection of every step as one GEMM).
// Layers, directions, lengths and initial states are recurrent_scan.cpp's (shared with nn::GRU).
#include "lstm.h"

#include "../autograd/ops/lstm_cell.h"
#include "../autograd/ops/lstm_layer.h"
#include "../core/error.h"
#include "recurrent_scan.h"

namespace heed::nn {

// ---------------------------------------------------------------- LSTMCell

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& opts)
    : Cloneable("LSTMCell", 4, opts.input_size(), opts.hidden_size(), opts.bias()),
      options(opts) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& x,
                                             const std::optional<std::tuple<Tensor, Tensor>>& hx) {
  const int64_t In = options.input_size(), H = options.hidden_size();
  HEED_CHECK(x.defined() && x.dim() == 2 && x.size(1) == In, "LSTMCell", "input must be (B, ",
             In, "), got ", x.defined() ? x.shape() : Shape());
  const int64_t B = x.size(0);
  Tensor h = zeros({B, H}), c = zeros({B, H});
  if (hx) std::tie(h, c) = *hx;
  const Shape want = {B, H};
  HEED_CHECK(h.defined() && h.shape() == want && c.defined() && c.shape() == want, "LSTMCell",
             "h and c must be (B, hidden_size) = ", want, ", got h ",
             h.defined() ? h.shape() : Shape(), " and c ", c.defined() ? c.shape() : Shape());
  return lstm_cell(x, h, c, weight_ih, weight_hh, bias_ih, bias_hh);
}

std::string LSTMCellImpl::repr() const { return cell_repr("LSTMCell"); }

// ---------------------------------------------------------------- LSTM

LSTMImpl::LSTMImpl(const LSTMOptions& opts) : Cloneable("LSTM", 4, opts), options(opts) {}

LSTMOutput LSTMImpl::forward(const Tensor& x, const std::optional<std::tuple<Tensor, Tensor>>& hx,
                         const std::vector<int64_t>& lengths) {
  Tensor h0, c0;
  if (hx) std::tie(h0, c0) = *hx;
  const int64_t dirs = options.bidirectional() ? 2 : 1;
  const auto direction = [this, dirs](int64_t l, int d, const Tensor& x_l, const detail::State& s0,
                                      const std::vector<int64_t>& len, detail::State& last) {
    const int64_t k = l * dirs + d;
    LSTMLayerOut r = lstm_layer(x_l, s0[0], s0[1],
                                {weight_ih[k], weight_hh[k], bias_ih[k], bias_hh[k]}, len, d == 1);
    last = {r.h_n, r.c_n};
    return r.out;
  };
  const detail::LayersOutput r =
      detail::run_layers("LSTM", x, {h0, c0}, {"h0", "c0"}, lengths,
                         detail::scan_config(options, is_training()), direction);
  return {r.output, r.last[0], r.last[1]};
}

LSTMOutput LSTMImpl::forward(const Tensor& x, const std::optional<std::tuple<Tensor, Tensor>>& hx,
                         const Tensor& padding_mask) {
  const detail::ScanConfig cfg = detail::scan_config(options, false);
  return forward(x, hx, detail::lengths_from_mask("LSTM", padding_mask, x, cfg));
}

std::string LSTMImpl::repr() const {
  return "LSTM" + detail::repr_args(detail::scan_config(options, false), options.bias());
}

}  // namespace heed::nn
