// gru.cpp - nn::GRUCell and nn::GRU: forward and repr (the parameters and their PyTorch
// initialisation are recurrent_base.cpp's, shared with nn::LSTM).
// GRUCell's step is heed::gru_cell_reference, composed from heed ops; each direction of each
// GRU layer is one fused heed::gru_layer (autograd/ops/gru_layer.h: the input projection of
// every step as one GEMM). Layers, directions, lengths and initial states are
// recurrent_scan.cpp's (shared with nn::LSTM).
#include "gru.h"

#include "../autograd/ops/gru_layer.h"
#include "../core/error.h"
#include "recurrent_scan.h"

namespace heed::nn {

// ---------------------------------------------------------------- GRUCell

GRUCellImpl::GRUCellImpl(const GRUCellOptions& opts)
    : Cloneable("GRUCell", 3, opts.input_size(), opts.hidden_size(), opts.bias()),
      options(opts) {}

Tensor GRUCellImpl::forward(const Tensor& x, const Tensor& h_in) {
  const int64_t In = options.input_size(), H = options.hidden_size();
  HEED_CHECK(x.defined() && x.dim() == 2 && x.size(1) == In, "GRUCell", "input must be (B, ", In,
             "), got ", x.defined() ? x.shape() : Shape());
  const Tensor h = h_in.defined() ? h_in : zeros({x.size(0), H});
  HEED_CHECK(h.shape() == Shape({x.size(0), H}), "GRUCell", "h must be (B, hidden_size) = ",
             Shape({x.size(0), H}), ", got ", h.shape());
  return gru_cell_reference(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
}

std::string GRUCellImpl::repr() const { return cell_repr("GRUCell"); }

// ---------------------------------------------------------------- GRU

GRUImpl::GRUImpl(const GRUOptions& opts) : Cloneable("GRU", 3, opts), options(opts) {}

GRUOutput GRUImpl::forward(const Tensor& x, const Tensor& h0, const std::vector<int64_t>& lengths) {
  const int64_t dirs = options.bidirectional() ? 2 : 1;
  const auto direction = [this, dirs](int64_t l, int d, const Tensor& x_l, const detail::State& s0,
                                      const std::vector<int64_t>& len, detail::State& last) {
    const int64_t k = l * dirs + d;
    GRULayerOut r =
        gru_layer(x_l, s0[0], {weight_ih[k], weight_hh[k], bias_ih[k], bias_hh[k]}, len, d == 1);
    last = {r.h_n};
    return r.out;
  };
  const detail::LayersOutput r =
      detail::run_layers("GRU", x, {h0}, {"h0"}, lengths,
                         detail::scan_config(options, is_training()), direction);
  return {r.output, r.last[0]};
}

GRUOutput GRUImpl::forward(const Tensor& x, const Tensor& h0, const Tensor& padding_mask) {
  const detail::ScanConfig cfg = detail::scan_config(options, false);
  return forward(x, h0, detail::lengths_from_mask("GRU", padding_mask, x, cfg));
}

std::string GRUImpl::repr() const {
  return "GRU" + detail::repr_args(detail::scan_config(options, false), options.bias());
}

}  // namespace heed::nn
