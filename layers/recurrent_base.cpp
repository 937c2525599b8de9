// recurrent_base.cpp - the parameters shared by the recurrent cells and layers (recurrent_base.h).
#include "recurrent_base.h"

#include <cmath>

#include "../core/error.h"
#include "init.h"

namespace heed::nn::detail {

RecurrentCellBase::RecurrentCellBase(const char* op, int64_t gates, int64_t input_size,
                                     int64_t hidden_size, bool bias)
    : input_size_(input_size), hidden_size_(hidden_size), bias_(bias) {
  check_options(op, input_size, hidden_size);
  const int64_t G = gates * hidden_size;
  weight_ih = register_parameter("weight_ih", empty({G, input_size}));
  weight_hh = register_parameter("weight_hh", empty({G, hidden_size}));
  if (bias) {
    bias_ih = register_parameter("bias_ih", empty({G}));
    bias_hh = register_parameter("bias_hh", empty({G}));
  }
  reset_parameters();
}

void RecurrentCellBase::reset_parameters() { init_uniform(parameters(), hidden_size_); }

std::string RecurrentCellBase::cell_repr(const char* name) const {
  return std::string(name) + "(" + std::to_string(input_size_) + ", " +
         std::to_string(hidden_size_) + (bias_ ? "" : ", bias=False") + ")";
}

RecurrentBase::RecurrentBase(const char* op, int64_t gates, int64_t input_size,
                             int64_t hidden_size, int64_t num_layers, bool bidirectional,
                             bool bias, double dropout)
    : hidden_size_(hidden_size) {
  check_options(op, input_size, hidden_size, num_layers, dropout);
  const int64_t H = hidden_size, G = gates * H, dirs = bidirectional ? 2 : 1;
  // Registered in PyTorch's order: per layer, per direction, w_ih, w_hh, b_ih, b_hh.
  for (int64_t l = 0; l < num_layers; ++l) {
    const int64_t in = l == 0 ? input_size : dirs * H;
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      weight_ih.push_back(register_parameter("weight_ih" + sfx, empty({G, in})));
      weight_hh.push_back(register_parameter("weight_hh" + sfx, empty({G, H})));
      bias_ih.push_back(bias ? register_parameter("bias_ih" + sfx, empty({G})) : Tensor());
      bias_hh.push_back(bias ? register_parameter("bias_hh" + sfx, empty({G})) : Tensor());
    }
  }
  reset_parameters();
}

void RecurrentBase::reset_parameters() { init_uniform(parameters(), hidden_size_); }

void check_options(const char* op, int64_t input_size, int64_t hidden_size, int64_t num_layers,
                   double dropout) {
  HEED_CHECK(input_size > 0 && hidden_size > 0, op, "input_size and hidden_size must be > 0; got ",
             input_size, " and ", hidden_size);
  HEED_CHECK(num_layers >= 1, op, "num_layers must be >= 1, got ", num_layers);
  HEED_CHECK(dropout >= 0 && dropout < 1, op, "dropout must be in [0, 1), got ", dropout);
}

void init_uniform(const std::vector<Tensor>& params, int64_t hidden_size) {
  const double k = 1 / std::sqrt(double(hidden_size));
  for (Tensor p : params) init::uniform_(p, -k, k);
}

}  // namespace heed::nn::detail
