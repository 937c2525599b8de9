// gru.cpp - nn::GRUCell and nn::GRU. The step is composed from heed ops; the time loop,
// lengths and layers are lstm_scan.cpp's (shared with nn::LSTM). nn::GRU projects the input of
// every step at once (gi = x W_ih^T + b_ih: one GEMM forward, and one each for dx and dW_ih
// backward) and runs only the recurrent half inside the loop.
#include "gru.h"

#include "../autograd/arith.h"
#include "../autograd/linear_op.h"
#include "../autograd/shape_ops.h"
#include "../autograd/unary.h"
#include "../core/error.h"
#include "lstm_scan.h"

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

detail::ScanConfig config(const GRUOptions& o, bool training) {
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

// ---------------------------------------------------------------- GRUCell

GRUCell::GRUCell(const GRUCellOptions& opts) : options(opts) {
  detail::check_options("GRUCell", options.input_size(), options.hidden_size());
  const int64_t In = options.input_size(), H = options.hidden_size();
  weight_ih = register_parameter("weight_ih", empty({3 * H, In}));
  weight_hh = register_parameter("weight_hh", empty({3 * H, H}));
  if (options.bias()) {
    bias_ih = register_parameter("bias_ih", empty({3 * H}));
    bias_hh = register_parameter("bias_hh", empty({3 * H}));
  }
  reset_parameters();
}

void GRUCell::reset_parameters() { detail::init_uniform(parameters(), options.hidden_size()); }

Tensor GRUCell::forward(const Tensor& x, const Tensor& h_in) {
  const int64_t In = options.input_size(), H = options.hidden_size();
  HEED_CHECK(x.defined() && x.dim() == 2 && x.size(1) == In, "GRUCell", "input must be (B, ", In,
             "), got ", x.defined() ? x.shape() : Shape());
  const Tensor h = h_in.defined() ? h_in : zeros({x.size(0), H});
  HEED_CHECK(h.shape() == Shape({x.size(0), H}), "GRUCell", "h must be (B, hidden_size) = ",
             Shape({x.size(0), H}), ", got ", h.shape());
  return gru_step(linear(x, weight_ih, bias_ih), h, weight_hh, bias_hh);
}

std::string GRUCell::repr() const {
  return "GRUCell(" + std::to_string(options.input_size()) + ", " +
         std::to_string(options.hidden_size()) + (options.bias() ? "" : ", bias=False") + ")";
}

// ---------------------------------------------------------------- GRU

GRU::GRU(const GRUOptions& opts) : options(opts) {
  detail::check_options("GRU", options.input_size(), options.hidden_size(), options.num_layers(),
                        options.dropout());
  const int64_t H = options.hidden_size(), dirs = options.bidirectional() ? 2 : 1;
  // Registered in PyTorch's order: per layer, per direction, w_ih, w_hh, b_ih, b_hh.
  for (int64_t l = 0; l < options.num_layers(); ++l) {
    const int64_t in = l == 0 ? options.input_size() : dirs * H;
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      weight_ih.push_back(register_parameter("weight_ih" + sfx, empty({3 * H, in})));
      weight_hh.push_back(register_parameter("weight_hh" + sfx, empty({3 * H, H})));
      bias_ih.push_back(options.bias() ? register_parameter("bias_ih" + sfx, empty({3 * H})) : Tensor());
      bias_hh.push_back(options.bias() ? register_parameter("bias_hh" + sfx, empty({3 * H})) : Tensor());
    }
  }
  reset_parameters();
}

void GRU::reset_parameters() { detail::init_uniform(parameters(), options.hidden_size()); }

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
  const detail::LayersOutput r = detail::run_layers("GRU", x, {h0}, {"h0"}, lengths,
                                                    config(options, is_training()), direction);
  return {r.output, r.last[0]};
}

GRUOutput GRU::forward(const Tensor& x, const Tensor& h0, const Tensor& padding_mask) {
  return forward(x, h0, detail::lengths_from_mask("GRU", padding_mask, x, config(options, false)));
}

std::string GRU::repr() const {
  return "GRU" + detail::repr_args(config(options, false), options.bias());
}

}  // namespace heed::nn
