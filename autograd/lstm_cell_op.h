// lstm_cell_op.h - one LSTM step as a single fused, differentiable op, its forward and
// backward kernels over plain pointers, and its twin built from heed's primitive ops.
// nn::LSTMCell (layers/lstm.h) calls the fused op.
//
//   gates = x W_ih^T + b_ih + h W_hh^T + b_hh          (B, 4H), split as [i | f | g | o]
//   i = sigmoid(gates_i)   f = sigmoid(gates_f)   g = tanh(gates_g)   o = sigmoid(gates_o)
//   c' = f * c + i * g
//   h' = o * tanh(c')
// Gate order i, f, g, o and the two biases are PyTorch's (torch.nn.LSTMCell), so weights
// copy over one to one. Hochreiter & Schmidhuber 1997; forget gate: Gers et al. 2000.
//
// Shapes: x (B, In), h and c (B, H), w_ih (4H, In), w_hh (4H, H), b_ih and b_hh (4H) or
// undefined (no bias). B batch, In input features, H hidden size.
//
//   auto [h1, c1] = heed::lstm_cell(x, h0, c0, w_ih, w_hh, b_ih, b_hh);
#pragma once
#include <cstdint>
#include <tuple>

#include "../core/tensor.h"

namespace heed {

// The fused op: two gemms and one elementwise loop forward, a hand-written backward.
// Returns (h', c'), each (B, H).
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& x, const Tensor& h, const Tensor& c,
                                     const Tensor& w_ih, const Tensor& w_hh,
                                     const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());

// The recorded node itself: h' and c' stacked as one (2, B, H) tensor [h'; c'].
// lstm_cell() returns its two halves (see lstm_cell_op.cpp for why one output).
Tensor lstm_cell_packed(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& w_ih,
                        const Tensor& w_hh, const Tensor& b_ih = Tensor(),
                        const Tensor& b_hh = Tensor());

// The same step composed from matmul, transpose, narrow, sigmoid, tanh, mul and add:
// slower, and its gradient comes from those ops' backwards. The reference the fused op
// is tested against (tests/test_lstm.cpp, tests/gradcheck_lstm.cpp).
std::tuple<Tensor, Tensor> lstm_cell_reference(const Tensor& x, const Tensor& h, const Tensor& c,
                                               const Tensor& w_ih, const Tensor& w_hh,
                                               const Tensor& b_ih = Tensor(),
                                               const Tensor& b_hh = Tensor());

// The kernels, outputs first (as llm.c's). acts (B, 4H) holds the gates' activations
// [i | f | g | o]: written by the forward, read by the backward.
// Forward writes h1, c1 (B, H) and acts from x (B, In), h, c (B, H), w_ih (4H, In),
// w_hh (4H, H); b_ih, b_hh (4H) may be null.
void lstm_cell_forward(real* h1, real* c1, real* acts, const real* x, const real* h, const real* c,
                       const real* w_ih, const real* w_hh, const real* b_ih, const real* b_hh,
                       int64_t B, int64_t In, int64_t H);
// Backward WRITES (=) dx (B, In), dh, dc (B, H) and db (4H, the gradient of each bias), and
// writes dw_ih (4H, In) and dw_hh (4H, H) with beta_ih, beta_hh = 0, or ADDS (+=) into them
// with beta 1 (the op passes the weights' running gradient sums over decoder steps,
// Grads::write_or_add); a null one is not computed. dgates (B, 4H) is scratch. dh1, dc1
// (B, H) are the upstream gradients; acts and c1 as the forward left them; the rest are the
// forward's inputs.
void lstm_cell_backward(real* dx, real* dh, real* dc, real* dw_ih, real* dw_hh, real* db,
                        real* dgates, const real* dh1, const real* dc1, const real* acts,
                        const real* x, const real* h, const real* c, const real* c1,
                        const real* w_ih, const real* w_hh, int64_t B, int64_t In, int64_t H,
                        real beta_ih = 0, real beta_hh = 0);

}  // namespace heed
