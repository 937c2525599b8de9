// lstm.cpp - nn::LSTMCell and nn::LSTM: parameters, PyTorch's initialisation, forward.
// LSTMCell's step is the fused heed::lstm_cell; each direction of each LSTM layer is one fused
// heed::lstm_layer (autograd/lstm_layer_op.h: the input projection of every step as one GEMM).
// Layers, directions, lengths and initial states are lstm_scan.cpp's (shared with nn::GRU).
#include "lstm.h"

#include "../autograd/lstm_cell_op.h"
#include "../autograd/lstm_layer_op.h"
#include "../core/error.h"
#include "lstm_scan.h"

namespace heed::nn {

namespace {

detail::ScanConfig config(const LSTMOptions& o, bool training) {
  detail::ScanConfig cfg;
  cfg.input_size = o.input_size();
  cfg.hidden_size = o.hidden_size();
  cfg.num_layers = o.num_layers();
  cfg.bidirectional = o.bidirectional();
  cfg.batch_first = o.batch_first();
  cfg.dropout = o.dropout();
  cfg.training = training;
  return cfg;
}

}  // namespace

// ---------------------------------------------------------------- LSTMCell

LSTMCell::LSTMCell(const LSTMCellOptions& opts) : options(opts) {
  detail::check_options("LSTMCell", options.input_size(), options.hidden_size());
  const int64_t In = options.input_size(), H = options.hidden_size();
  weight_ih = register_parameter("weight_ih", empty({4 * H, In}));
  weight_hh = register_parameter("weight_hh", empty({4 * H, H}));
  if (options.bias()) {
    bias_ih = register_parameter("bias_ih", empty({4 * H}));
    bias_hh = register_parameter("bias_hh", empty({4 * H}));
  }
  reset_parameters();
}

void LSTMCell::reset_parameters() { detail::init_uniform(parameters(), options.hidden_size()); }

std::tuple<Tensor, Tensor> LSTMCell::forward(const Tensor& x,
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

std::string LSTMCell::repr() const {
  return "LSTMCell(" + std::to_string(options.input_size()) + ", " +
         std::to_string(options.hidden_size()) + (options.bias() ? "" : ", bias=False") + ")";
}

// ---------------------------------------------------------------- LSTM

LSTM::LSTM(const LSTMOptions& opts) : options(opts) {
  detail::check_options("LSTM", options.input_size(), options.hidden_size(), options.num_layers(),
                        options.dropout());
  const int64_t H = options.hidden_size(), dirs = options.bidirectional() ? 2 : 1;
  // Registered in PyTorch's order: per layer, per direction, w_ih, w_hh, b_ih, b_hh.
  for (int64_t l = 0; l < options.num_layers(); ++l) {
    const int64_t in = l == 0 ? options.input_size() : dirs * H;
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      weight_ih.push_back(register_parameter("weight_ih" + sfx, empty({4 * H, in})));
      weight_hh.push_back(register_parameter("weight_hh" + sfx, empty({4 * H, H})));
      bias_ih.push_back(options.bias() ? register_parameter("bias_ih" + sfx, empty({4 * H})) : Tensor());
      bias_hh.push_back(options.bias() ? register_parameter("bias_hh" + sfx, empty({4 * H})) : Tensor());
    }
  }
  reset_parameters();
}

void LSTM::reset_parameters() { detail::init_uniform(parameters(), options.hidden_size()); }

LSTMOutput LSTM::forward(const Tensor& x, const std::optional<std::tuple<Tensor, Tensor>>& hx,
                         const std::vector<int64_t>& lengths) {
  Tensor h0, c0;
  if (hx) std::tie(h0, c0) = *hx;
  const int64_t dirs = options.bidirectional() ? 2 : 1;
  const auto direction = [this, dirs](int64_t l, int d, const Tensor& x_l, const detail::State& s0,
                                      const std::vector<int64_t>& len, detail::State& last) {
    const int64_t k = l * dirs + d;
    LSTMLayerOut r = lstm_layer(x_l, s0[0], s0[1], weight_ih[k], weight_hh[k], bias_ih[k],
                                bias_hh[k], len, d == 1);
    last = {r.h_n, r.c_n};
    return r.out;
  };
  const detail::LayersOutput r = detail::run_layers(
      "LSTM", x, {h0, c0}, {"h0", "c0"}, lengths, config(options, is_training()), direction);
  return {r.output, r.last[0], r.last[1]};
}

LSTMOutput LSTM::forward(const Tensor& x, const std::optional<std::tuple<Tensor, Tensor>>& hx,
                         const Tensor& padding_mask) {
  return forward(x, hx, detail::lengths_from_mask("LSTM", padding_mask, x, config(options, false)));
}

std::string LSTM::repr() const {
  return "LSTM" + detail::repr_args(config(options, false), options.bias());
}

}  // namespace heed::nn
