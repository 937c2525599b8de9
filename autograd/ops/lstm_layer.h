// lstm_layer.h - one direction of one LSTM layer over a whole padded batch as a single
// fused, differentiable op, so that its matrix work runs as few large GEMMs. nn::LSTM
// (layers/lstm.cpp) calls it once per layer and direction.
//
// The step is lstm_cell.h's (PyTorch's gate order i, f, g, o; Hochreiter & Schmidhuber
// 1997, forget gate Gers et al. 2000). Of its two products, x_t W_ih^T does not depend on the
// recurrence, so it is done for every step at once; only h W_hh^T stays inside the loop:
//
//   forward   1. gates = x W_ih^T + b_ih + b_hh              one GEMM, (B*T, In) @ (In, 4H)
//             2. for each step t, in time order (reversed when `reverse`):
//                  gates_t += h W_hh^T                       (B, H) @ (H, 4H)
//                  h, c = the cell's elementwise step         (lstm_gates.h), valid rows only
//   backward  2. for each step, in the opposite order:
//                  dgates_t = the elementwise step's backward
//                  dh = dgates_t W_hh                        (B, 4H) @ (4H, H)
//             then, over all steps at once:
//                  [dW_hh | dW_ih] = dgates^T [h_prev | x]   one GEMM, (4H, B*T) @ (B*T, H+In)
//             1.   dx = dgates W_ih,  db = sum dgates                        one GEMM each
//
// The loop over steps runs in one parallel region (core/parallel.h, run_team): each thread owns
// a slice of the hidden units, packs the rows of W_hh that feed them once for the whole
// sequence (core/packed_gemm.h), and at each step computes their gate columns and their h and
// c; the threads meet once per step, where the product needs every unit of h. The results do
// not depend on the thread count (tests/test_lstm_layer.cpp checks 1 and 2 threads bit for bit).
//
// Variable lengths as recurrent_scan.h: row b has len_b valid steps; at a padded step the row's
// state is kept and its output is 0, so padded steps get dgates = 0 and add nothing.
//
// Shapes: x (B, T, In), h0 and c0 (B, H), w_ih (4H, In), w_hh (4H, H), b_ih and b_hh (4H) or
// undefined; out (B, T, H), h_n and c_n (B, H). B batch, T steps, In input features, H hidden.
//
//   auto [out, h_n, c_n] = heed::lstm_layer(x, h0, c0, {w_ih, w_hh, b_ih, b_hh}, lengths, false);
#pragma once
#include <vector>

#include "../../core/tensor.h"
#include "recurrent_args.h"

namespace heed {

struct LSTMLayerOut {
  Tensor out;  // (B, T, H): h at every step, 0 at padded steps
  Tensor h_n;  // (B, H): h after each row's last valid step
  Tensor c_n;  // (B, H): c likewise
};

// lengths: one per row in [1, T], or empty (every row T long). reverse: walk t = T-1 .. 0,
// each row starting at its own last valid step. w: w_ih (4H, In), w_hh (4H, H), biases (4H).
LSTMLayerOut lstm_layer(const Tensor& x, const Tensor& h0, const Tensor& c0,
                        const RecurrentWeights& w, const std::vector<int64_t>& lengths,
                        bool reverse);

// The raw kernels over plain pointers (llm.c style), one argument struct each, in llm.c's
// fixed order: the backward takes the forward's arguments (the sizes, the weights and what
// the forward saved) and the gradients. Besides out and h (recurrent_args.h, gates = 4), the
// forward writes these.
struct LSTMLayerArgs : LayerArgs {
  real* c = nullptr;           // (B, H): c0 in, c_n out
  real* acts = nullptr;        // (B, T, 4H) the gate activations
  real* hx = nullptr;          // (B, T, H + In) each step's [h_{t-1} | x_t] (h_{t-1} 0 at steps
                               // where every row is padding)
  real* c_prev = nullptr;      // (B, T, H) c_{t-1}, likewise
};
// The backward WRITES (=, not +=: the op hands it fresh buffers, so none is zero-filled first)
// dx, dw_ih, dw_hh and db; each may be null when not needed. dh and dc hold dh_n and dc_n on
// entry and dh0 and dc0 on return. dgates is scratch, written whole (0 at padded steps).
struct LSTMLayerGrads {
  const real* dout = nullptr;  // (B, T, H)
  real* dh = nullptr;          // (B, H)
  real* dc = nullptr;          // (B, H)
  real* dx = nullptr;          // (B, T, In)
  real* dw_ih = nullptr;       // (4H, In)
  real* dw_hh = nullptr;       // (4H, H)
  real* db = nullptr;          // (4H), the gradient of each bias
  real* dgates = nullptr;      // (B, T, 4H)
};
void lstm_layer_forward(const LSTMLayerArgs& a);
// Reads the forward's w_ih, w_hh, acts, hx and c_prev (not x: hx holds it).
void lstm_layer_backward(const LSTMLayerArgs& a, const LSTMLayerGrads& g);

}  // namespace heed
