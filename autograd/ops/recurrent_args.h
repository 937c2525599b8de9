// recurrent_args.h - the arguments the fused recurrent layers (lstm_layer.h,
// gru_layer.h) share: a layer direction's four weights, as their ops take them; the sizes
// of a padded batch, as their kernels and their one time loop (layer_steps.h) read them; and
// the kernels' common arguments.
#pragma once
#include <cstdint>
#include <utility>

#include "../../core/tensor.h"

namespace heed {

// One direction of one layer, PyTorch's names and gate-major layout: gates = 4 for LSTM
// [i | f | g | o], 3 for GRU [r | z | n]. {w_ih, w_hh} is a layer without biases.
struct RecurrentWeights {
  RecurrentWeights(Tensor w_ih_, Tensor w_hh_, Tensor b_ih_ = Tensor(), Tensor b_hh_ = Tensor())
      : w_ih(std::move(w_ih_)), w_hh(std::move(w_hh_)), b_ih(std::move(b_ih_)),
        b_hh(std::move(b_hh_)) {}
  Tensor w_ih;  // (gates*H, In)
  Tensor w_hh;  // (gates*H, H)
  Tensor b_ih;  // (gates*H), or undefined: no bias
  Tensor b_hh;  // (gates*H), or undefined
};

// A padded batch as the kernels see it: row b has len[b] valid steps, the rest padding.
struct LayerSizes {
  int64_t B = 0;                 // batch rows
  int64_t T = 0;                 // steps
  int64_t In = 0;                // input features
  int64_t H = 0;                 // hidden units
  const int64_t* len = nullptr;  // B lengths in [1, T], or null: every row is T long
  bool reverse = false;          // walk t = T-1 .. 0, each row from its own last valid step
};

// What the kernels of both fused layers read and write whatever their gates: x and the weights
// in, out and the state h. Each layer's argument struct adds its own saved buffers.
struct LayerArgs : LayerSizes {
  const real* x = nullptr;     // (B, T, In)
  const real* w_ih = nullptr;  // (gates*H, In)
  const real* w_hh = nullptr;  // (gates*H, H)
  const real* b_ih = nullptr;  // (gates*H), or null
  const real* b_hh = nullptr;  // (gates*H), or null
  real* out = nullptr;         // (B, T, H)
  real* h = nullptr;           // (B, H): h0 in, h_n out
};

}  // namespace heed
