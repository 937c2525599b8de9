// lstm_cell_op.cpp - the fused LSTM step: its forward and backward kernels, the recorded op, and
// its composed reference.
//
// Why one output. A heed Node has exactly one output, but a step yields two tensors.
// The fused node therefore returns h' and c' stacked as one (2, B, H) tensor [h'; c'],
// and lstm_cell() cuts it into its halves with narrow. The gradient of that one output
// then arrives as one (2, B, H) tensor [dh'; dc'] holding both upstream gradients (the
// engine has already summed whatever the two halves' consumers sent), so the backward
// below is a single function that undoes the forward from last line to first, as llm.c's
// backward passes do. The price is two (B, H) copies per step forward and backward,
// small next to the two gemms. (The alternative, separate nodes for the gates, c' and
// h', would avoid the copies but spread one derivation over three backward functions.)
//
// Shapes: x (B, In), h and c (B, H), w_ih (4H, In), w_hh (4H, H), biases (4H);
// gates/acts (B, 4H) laid out [i | f | g | o] along the last dim, as PyTorch.
#include "lstm_cell_op.h"

#include <cmath>
#include <vector>

#include "../core/blas.h"
#include "../core/error.h"
#include "../core/parallel.h"
#include "arith.h"
#include "linalg.h"
#include "lstm_gates.h"
#include "node.h"
#include "reduce.h"
#include "reduce_util.h"
#include "shape_ops.h"
#include "unary.h"

namespace heed {

namespace {

// Checks every shape against x (B, In) and w_hh (4H, H); returns H.
int64_t check_shapes(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& w_ih,
                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  const char* op = "lstm_cell";
  HEED_CHECK(x.defined() && h.defined() && c.defined() && w_ih.defined() && w_hh.defined(), op,
             "x, h, c, w_ih and w_hh must all be defined");
  HEED_CHECK(x.dim() == 2, op, "x must be (B, In), got shape ", x.shape());
  HEED_CHECK(w_hh.dim() == 2 && w_hh.size(0) == 4 * w_hh.size(1), op,
             "w_hh must be (4H, H), got shape ", w_hh.shape());
  const int64_t B = x.size(0), In = x.size(1), H = w_hh.size(1);
  HEED_CHECK(w_ih.shape() == Shape({4 * H, In}), op, "w_ih must be (4H, In) = ", Shape({4 * H, In}),
             " for x of shape ", x.shape(), " and w_hh of shape ", w_hh.shape(), ", got ",
             w_ih.shape());
  HEED_CHECK(h.shape() == Shape({B, H}), op, "h must be (B, H) = ", Shape({B, H}), ", got ", h.shape());
  HEED_CHECK(c.shape() == Shape({B, H}), op, "c must be (B, H) = ", Shape({B, H}), ", got ", c.shape());
  HEED_CHECK(!b_ih.defined() || b_ih.shape() == Shape({4 * H}), op, "b_ih must be (4H) = (",
             4 * H, "), got ", b_ih.shape());
  HEED_CHECK(!b_hh.defined() || b_hh.shape() == Shape({4 * H}), op, "b_hh must be (4H) = (",
             4 * H, "), got ", b_hh.shape());
  return H;
}

}  // namespace

// ---------------------------------------------------------------- the kernels

// Forward, in four numbered steps; the backward undoes them in reverse order.
void lstm_cell_forward(real* h1, real* c1, real* acts, const real* x, const real* h, const real* c,
                       const real* w_ih, const real* w_hh, const real* b_ih, const real* b_hh,
                       int64_t B, int64_t In, int64_t H) {
  const int64_t G = 4 * H;
  // 1. gates = x W_ih^T + h W_hh^T           (B, 4H), two gemms, weights read transposed
  gemm(false, true, B, G, In, 1, x, In, w_ih, In, 0, acts, G);
  gemm(false, true, B, G, H, 1, h, H, w_hh, H, 1, acts, G);
  // 2.-4. elementwise, a block of batch rows per thread (lstm_gates.h): gates += b_ih + b_hh,
  //       activated in place; c' = f * c + i * g; h' = o * tanh(c')
  parallel_for(B, kGrainTranscendental / G + 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      detail::lstm_gates_add_bias(acts + b * G, b_ih, b_hh, H);
      detail::lstm_gates_forward(acts + b * G, H, c + b * H, c1 + b * H, h1 + b * H, H);
    }
  });
}

void lstm_cell_backward(real* dx, real* dh, real* dc, real* dw_ih, real* dw_hh, real* db,
                        real* dgates, const real* dh1, const real* dc1, const real* acts,
                        const real* x, const real* h, const real* c, const real* c1,
                        const real* w_ih, const real* w_hh, int64_t B, int64_t In, int64_t H,
                        real beta_ih, real beta_hh) {
  const int64_t G = 4 * H;
  // 4.-2. dgates from dh' and dc', row by row (lstm_gates.h); dc = dc'_total * f
  parallel_for(B, kGrainTranscendental / G + 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      detail::lstm_gates_backward(acts + b * G, H, c + b * H, c1 + b * H, dh1 + b * H,
                                  dc1 + b * H, dgates + b * G, dc ? dc + b * H : nullptr, H);
  });
  // 1. gates = x W_ih^T + b_ih + h W_hh^T + b_hh
  //    dx = dgates W_ih   dW_ih = dgates^T x   db = sum_b dgates   (and the same for h)
  if (dx) gemm(false, false, B, In, G, 1, dgates, G, w_ih, In, 0, dx, In);
  if (dh) gemm(false, false, B, H, G, 1, dgates, G, w_hh, H, 0, dh, H);
  if (dw_ih) gemm(true, false, G, In, B, 1, dgates, G, x, In, beta_ih, dw_ih, In);
  if (dw_hh) gemm(true, false, G, H, B, 1, dgates, G, h, H, beta_hh, dw_hh, H);
  if (db) detail::column_sums(db, dgates, B, G);
}

// ---------------------------------------------------------------- the op

Tensor lstm_cell_packed(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& w_ih,
                        const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  const int64_t H = check_shapes(x, h, c, w_ih, w_hh, b_ih, b_hh);
  const int64_t B = x.size(0), In = x.size(1), G = 4 * H;
  Tensor y = empty({2, B, H});     // [h'; c']
  Tensor acts = empty({B, G});     // the gates' activations, [i | f | g | o]
  lstm_cell_forward(y.data(), y.data() + B * H, acts.data(), x.data(), h.data(), c.data(),
                    w_ih.data(), w_hh.data(), data_or_null(b_ih), data_or_null(b_hh), B, In, H);
  // Saved: the inputs the gemms read (x, h, w_ih, w_hh), c, the activations, and c'
  // (inside y; captured detached, as an op may hold its own output).
  return record("lstm_cell", y, {x, h, c, w_ih, w_hh, b_ih, b_hh},
                [x = SavedTensor(x), h = SavedTensor(h), c = SavedTensor(c),
                 w_ih = SavedTensor(w_ih), w_hh = SavedTensor(w_hh), acts,
                 y = SavedTensor(y.detach()), B, In, H, G](const Tensor& dy, Grads& g) {
    real *dx = g.write(0, {B, In}), *dh = g.write(1, {B, H}), *dc = g.write(2, {B, H});
    // The weights' gradients are added into their running sums over steps when there are any.
    const auto [dw_ih, beta_ih] = g.write_or_add(3, {G, In});
    const auto [dw_hh, beta_hh] = g.write_or_add(4, {G, H});
    real* db = nullptr;  // one (G) gradient for both biases
    if (g.needs(5) || g.needs(6)) {
      const Tensor t = empty({G});
      db = t.data();
      for (int i : {5, 6})
        if (g.needs(i)) g[i] = t;
    }
    lstm_cell_backward(dx, dh, dc, dw_ih, dw_hh, db, empty({B, G}).data(), dy.data(),
                       dy.data() + B * H, acts.data(), x.data(), h.data(), c.data(), y.data() + B * H,
                       w_ih.data(), w_hh.data(), B, In, H, beta_ih, beta_hh);  // dy = [dh'; dc']
  });
}

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& x, const Tensor& h, const Tensor& c,
                                     const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                     const Tensor& b_hh) {
  const Tensor y = lstm_cell_packed(x, h, c, w_ih, w_hh, b_ih, b_hh);  // (2, B, H)
  const Shape bh = {y.size(1), y.size(2)};
  return {narrow(y, 0, 0, 1).reshape(bh), narrow(y, 0, 1, 1).reshape(bh)};
}

// The same four steps from primitive ops; autograd derives the backward.
std::tuple<Tensor, Tensor> lstm_cell_reference(const Tensor& x, const Tensor& h, const Tensor& c,
                                               const Tensor& w_ih, const Tensor& w_hh,
                                               const Tensor& b_ih, const Tensor& b_hh) {
  const int64_t H = check_shapes(x, h, c, w_ih, w_hh, b_ih, b_hh);
  // 1. gates = x W_ih^T + b_ih + h W_hh^T + b_hh
  Tensor gates = matmul(x, transpose(w_ih, 0, 1)) + matmul(h, transpose(w_hh, 0, 1));
  if (b_ih.defined()) gates = gates + b_ih;
  if (b_hh.defined()) gates = gates + b_hh;
  // 2. the four gates, in PyTorch's order
  const Tensor i = sigmoid(narrow(gates, 1, 0, H));
  const Tensor f = sigmoid(narrow(gates, 1, H, H));
  const Tensor g = tanh(narrow(gates, 1, 2 * H, H));
  const Tensor o = sigmoid(narrow(gates, 1, 3 * H, H));
  // 3. c' = f * c + i * g
  const Tensor c1 = f * c + i * g;
  // 4. h' = o * tanh(c')
  return {o * tanh(c1), c1};
}

}  // namespace heed
