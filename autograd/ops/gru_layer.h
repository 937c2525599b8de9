// gru_layer.h - one direction of one GRU layer over a whole padded batch as a single
// fused, differentiable op, so that its matrix work runs as few large GEMMs; and the GRU
// step composed from heed's primitive ops, its reference. nn::GRU (layers/gru.cpp) calls
// gru_layer once per layer and direction, nn::GRUCell calls gru_cell_reference.
//
// PyTorch's GRU (torch.nn.GRU, gate order [r | z | n]; Cho et al. 2014):
//   r  = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)        reset gate
//   z  = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)        update gate
//   n  = tanh   (x W_in^T + b_in + r * (h W_hn^T + b_hn))  candidate
//   h' = (1 - z) * n + z * h
// As in lstm_layer.h, x W_ih^T does not depend on the recurrence, so it is done for every
// step at once; only h W_hh^T stays inside the loop:
//
//   forward   1. gi = x W_ih^T + b_ih (+ b_hr, b_hz)          one GEMM, (B*T, In) @ (In, 3H)
//             2. for each step t, in time order (reversed when `reverse`):
//                  gh = h W_hh^T                             (B, H) @ (H, 3H)
//                  h  = the elementwise step below            valid rows only
//   backward  2. for each step, in the opposite order:
//                  dgi_t, dgh_t = the elementwise step's backward
//                  dh = dh' * z + dgh_t W_hh                 (B, 3H) @ (3H, H)
//             then, over all steps at once:
//                  dW_hh = dgh^T h_prev,  db_hh = sum dgh    one GEMM, (3H, B*T) @ (B*T, H)
//             1.   dW_ih = dgi^T x,  dx = dgi W_ih,  db_ih = sum dgi     one GEMM each
//
// The loop over steps runs in one parallel region, split by hidden units, as lstm_layer.h
// describes (packed W_hh, one barrier per step, the same bits on any thread count).
//
// Variable lengths as recurrent_scan.h: row b has len_b valid steps; at a padded step the row's
// state is kept and its output is 0, so padded steps get dgi = dgh = 0 and add nothing.
//
// Shapes: x (B, T, In), h0 (B, H), w_ih (3H, In), w_hh (3H, H), b_ih and b_hh (3H) or
// undefined; out (B, T, H), h_n (B, H). B batch, T steps, In input features, H hidden.
//
//   auto [out, h_n] = heed::gru_layer(x, h0, {w_ih, w_hh, b_ih, b_hh}, lengths, false);
#pragma once
#include <vector>

#include "../../core/tensor.h"
#include "recurrent_args.h"

namespace heed {

struct GRULayerOut {
  Tensor out;  // (B, T, H): h at every step, 0 at padded steps
  Tensor h_n;  // (B, H): h after each row's last valid step
};

// lengths: one per row in [1, T], or empty (every row T long). reverse: walk t = T-1 .. 0,
// each row starting at its own last valid step. w: w_ih (3H, In), w_hh (3H, H), biases (3H).
GRULayerOut gru_layer(const Tensor& x, const Tensor& h0, const RecurrentWeights& w,
                      const std::vector<int64_t>& lengths, bool reverse);

// One GRU step composed from linear, narrow, sigmoid, tanh, mul and add: x (B, In), h (B, H)
// -> h' (B, H); its gradient comes from those ops' backwards. What nn::GRUCell runs, and the
// reference the fused layer is tested against (tests/test_gru_layer.cpp).
Tensor gru_cell_reference(const Tensor& x, const Tensor& h, const Tensor& w_ih,
                          const Tensor& w_hh, const Tensor& b_ih = Tensor(),
                          const Tensor& b_hh = Tensor());

// The raw kernels over plain pointers (llm.c style), one argument struct each, in llm.c's
// fixed order: the backward takes the forward's arguments (the sizes, the inputs and what the
// forward saved) and the gradients. Besides out and h (recurrent_args.h, gates = 3), the
// forward writes these.
struct GRULayerArgs : LayerArgs {
  real* acts = nullptr;        // (B, T, 4H) [r | z | n | hn] per step, hn = h W_hn^T + b_hn
  real* h_prev = nullptr;      // (B, T, H) the state each step started from (0 at steps where
                               // every row is padding)
};
// The backward WRITES (=, not +=: the op hands it fresh buffers, so none is zero-filled first)
// dx, dw_ih, dw_hh, db_ih and db_hh; each may be null. dh holds dh_n on entry and dh0 on
// return. dgi and dgh are scratch, written whole (0 at padded steps).
struct GRULayerGrads {
  const real* dout = nullptr;  // (B, T, H)
  real* dh = nullptr;          // (B, H)
  real* dx = nullptr;          // (B, T, In)
  real* dw_ih = nullptr;       // (3H, In)
  real* dw_hh = nullptr;       // (3H, H)
  real* db_ih = nullptr;       // (3H)
  real* db_hh = nullptr;       // (3H)
  real* dgi = nullptr;         // (B, T, 3H)
  real* dgh = nullptr;         // (B, T, 3H)
};
void gru_layer_forward(const GRULayerArgs& a);
// Reads the forward's x, w_ih, w_hh, acts and h_prev.
void gru_layer_backward(const GRULayerArgs& a, const GRULayerGrads& g);

}  // namespace heed
