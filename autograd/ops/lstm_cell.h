// lstm_cell.h - one LSTM step as a single fused, differentiable op, its forward and
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

#include "../../core/tensor.h"

namespace heed {

// The fused op: two gemms and one elementwise loop forward, a hand-written backward.
// Returns (h', c'), each (B, H).
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& x, const Tensor& h, const Tensor& c,
                                     const Tensor& w_ih, const Tensor& w_hh,
                                     const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());

// The recorded node itself: h' and c' stacked as one (2, B, H) tensor [h'; c'].
// lstm_cell() returns its two halves (see lstm_cell.cpp for why one output).
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

// The kernels over plain pointers, one argument struct each, in llm.c's fixed order: the
// backward takes the forward's arguments (sizes, inputs, and the acts and c1 it wrote) and
// the gradients. acts holds the gates' activations [i | f | g | o].
struct LSTMCellArgs {
  int64_t B = 0, In = 0, H = 0;  // batch, input features, hidden units
  const real* x = nullptr;       // (B, In)
  const real* h = nullptr;       // (B, H)
  const real* c = nullptr;       // (B, H)
  const real* w_ih = nullptr;    // (4H, In)
  const real* w_hh = nullptr;    // (4H, H)
  const real* b_ih = nullptr;    // (4H), or null
  const real* b_hh = nullptr;    // (4H), or null
  real* h1 = nullptr;            // (B, H) out: h'
  real* c1 = nullptr;            // (B, H) out: c'
  real* acts = nullptr;          // (B, 4H) out
  // w_ih and w_hh hold bfloat16 values already: the parameters' copies under "medium"
  // (core/bf16_cache.h), which the gemms then need not round again; w_ih16, w_hh16 their 16
  // bits where "medium" runs on bf16 units (or null), which the bf16 matmul reads as they are
  bool w_rounded = false;
  const uint16_t* w_ih16 = nullptr;  // (4H, In)
  const uint16_t* w_hh16 = nullptr;  // (4H, H)
};
// The backward WRITES (=) dx, dh, dc and db (the gradient of each bias), and writes dw_ih and
// dw_hh with beta_ih, beta_hh = 0, or ADDS (+=) into them with beta 1 (the op passes the
// weights' running gradient sums over decoder steps, Grads::write_or_add); a null one is not
// computed. dgates is scratch.
struct LSTMCellGrads {
  const real* dh1 = nullptr;  // (B, H) upstream: dL/dh'
  const real* dc1 = nullptr;  // (B, H) upstream: dL/dc'
  real* dx = nullptr;         // (B, In)
  real* dh = nullptr;         // (B, H)
  real* dc = nullptr;         // (B, H)
  real* dw_ih = nullptr;      // (4H, In)
  real* dw_hh = nullptr;      // (4H, H)
  real* db = nullptr;         // (4H)
  real beta_ih = 0, beta_hh = 0;
  real* dgates = nullptr;     // (B, 4H)
};
void lstm_cell_forward(const LSTMCellArgs& a);
void lstm_cell_backward(const LSTMCellArgs& a, const LSTMCellGrads& g);

}  // namespace heed
