// lstm_layer_op.h - one direction of one LSTM layer over a whole padded batch as a single
// fused, differentiable op, so that its matrix work runs as few large GEMMs. nn::LSTM
// (layers/lstm.cpp) calls it once per layer and direction.
//
// The step is lstm_cell_op.h's (PyTorch's gate order i, f, g, o; Hochreiter & Schmidhuber
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
//   auto [out, h_n, c_n] = heed::lstm_layer(x, h0, c0, w_ih, w_hh, b_ih, b_hh, lengths, false);
#pragma once
#include <vector>

#include "../core/tensor.h"

namespace heed {

struct LSTMLayerOut {
  Tensor out;  // (B, T, H): h at every step, 0 at padded steps
  Tensor h_n;  // (B, H): h after each row's last valid step
  Tensor c_n;  // (B, H): c likewise
};

// lengths: one per row in [1, T], or empty (every row T long). reverse: walk t = T-1 .. 0,
// each row starting at its own last valid step.
LSTMLayerOut lstm_layer(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_ih,
                        const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                        const std::vector<int64_t>& lengths, bool reverse);

// The raw kernels over plain pointers (llm.c style). len: B lengths or null (all T).
// Forward writes out (B, T, H), h and c (B, H: h0 and c0 in, h_n and c_n out), and for the
// backward: acts (B, T, 4H) the gate activations; hx (B, T, H + In), each step's [h_{t-1} | x_t]
// (h_{t-1} 0 at steps where every row is padding), and c_prev (B, T, H), c_{t-1} likewise.
void lstm_layer_forward(real* out, real* h, real* c, real* acts, real* hx, real* c_prev,
                        const real* x, const real* w_ih, const real* w_hh, const real* b_ih,
                        const real* b_hh, const int64_t* len, bool reverse, int64_t B, int64_t T,
                        int64_t In, int64_t H);
// Backward WRITES (=, not +=: the op hands it fresh buffers, so none is zero-filled first)
// dx (B, T, In), dw_ih (4H, In), dw_hh (4H, H), db (4H); each may be null when not needed.
// dh and dc (B, H) hold dh_n and dc_n on entry and dh0 and dc0 on return. dout (B, T, H).
// dgates (B, T, 4H) is scratch, written whole (0 at padded steps), no need to zero it.
void lstm_layer_backward(real* dx, real* dw_ih, real* dw_hh, real* db, real* dh, real* dc,
                         real* dgates, const real* dout, const real* acts, const real* hx,
                         const real* c_prev, const real* w_ih, const real* w_hh,
                         const int64_t* len, bool reverse, int64_t B, int64_t T, int64_t In,
                         int64_t H);

}  // namespace heed
