// lstm_cell.cpp - the fused LSTM step: its forward and backward kernels, the recorded op, and
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
#include "lstm_cell.h"

#include <cmath>
#include <vector>

#include "../../core/bf16_cache.h"
#include "../../core/blas.h"
#include "../../core/error.h"
#include "../../core/parallel.h"
#include "../engine/composed_backward.h"
#include "../engine/node.h"
#include "arith.h"
#include "linalg.h"
#include "lstm_gates.h"
#include "reduce.h"
#include "reduce_util.h"
#include "shape.h"
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
void lstm_cell_forward(const LSTMCellArgs& a) {
  const int64_t B = a.B, In = a.In, H = a.H, G = 4 * H;
  // 1. gates = x W_ih^T + h W_hh^T           (B, 4H), two gemms, weights read transposed
  gemm({false, a.w_rounded, nullptr, a.w_ih16}, false, true, B, G, In, 1, a.x, In, a.w_ih, In, 0, a.acts, G);
  gemm({false, a.w_rounded, nullptr, a.w_hh16}, false, true, B, G, H, 1, a.h, H, a.w_hh, H, 1, a.acts, G);
  // 2.-4. elementwise, a block of batch rows per thread (lstm_gates.h): gates += b_ih + b_hh,
  //       activated in place; c' = f * c + i * g; h' = o * tanh(c')
  parallel_for(B, kGrainTranscendental / G + 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      detail::lstm_gates_add_bias(a.acts + b * G, a.b_ih, a.b_hh, H);
      detail::lstm_gates_forward(a.acts + b * G, H, a.c + b * H, a.c1 + b * H, a.h1 + b * H, H);
    }
  });
}

void lstm_cell_backward(const LSTMCellArgs& a, const LSTMCellGrads& g) {
  const int64_t B = a.B, In = a.In, H = a.H, G = 4 * H;
  // 4.-2. dgates from dh' and dc', row by row (lstm_gates.h); dc = dc'_total * f
  parallel_for(B, kGrainTranscendental / G + 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      detail::lstm_gates_backward(a.acts + b * G, H, a.c + b * H, a.c1 + b * H,
                                  {g.dh1 + b * H, g.dc1 + b * H, g.dgates + b * G,
                                   g.dc ? g.dc + b * H : nullptr},
                                  H);
  });
  // 1. gates = x W_ih^T + b_ih + h W_hh^T + b_hh
  //    dx = dgates W_ih   dW_ih = dgates^T x   db = sum_b dgates   (and the same for h)
  //    Under "medium" dgates is rounded once for its four products (core/blas.h).
  const Bf16Matrix dg(g.dgates, G, B, g.dx || g.dh || g.dw_ih || g.dw_hh ? G : 0);  // (B, G)
  const Bf16Inputs w_ih = dg.as_a({false, a.w_rounded, nullptr, a.w_ih16});
  const Bf16Inputs w_hh = dg.as_a({false, a.w_rounded, nullptr, a.w_hh16});
  if (g.dx) gemm(w_ih, false, false, B, In, G, 1, dg.data(), dg.ld(), a.w_ih, In, 0, g.dx, In);
  if (g.dh) gemm(w_hh, false, false, B, H, G, 1, dg.data(), dg.ld(), a.w_hh, H, 0, g.dh, H);
  if (g.dw_ih) gemm(dg.as_a(), true, false, G, In, B, 1, dg.data(), dg.ld(), a.x, In, g.beta_ih, g.dw_ih, In);
  if (g.dw_hh) gemm(dg.as_a(), true, false, G, H, B, 1, dg.data(), dg.ld(), a.h, H, g.beta_hh, g.dw_hh, H);
  if (g.db) detail::column_sums(g.db, g.dgates, B, G);
}

// ---------------------------------------------------------------- the op

namespace {

// The weights as the gemms read them: under "medium", both parameters' bfloat16 copies
// (core/bf16_cache.h), held here while the kernels run; otherwise none.
struct Bf16Weights {
  Bf16Weights(const Tensor& w_ih, const Tensor& w_hh) : ih(bf16_cached(w_ih)), hh(bf16_cached(w_hh)) {}
  std::shared_ptr<const Bf16Copy> ih, hh;
  bool both() const { return ih && hh; }
};

// The kernels' arguments for the op's tensors; y = [h'; c'] (2, B, H), acts (B, 4H).
LSTMCellArgs kernel_args(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& w_ih,
                         const Tensor& w_hh, const Tensor& y, const Tensor& acts,
                         const Bf16Weights& w16) {
  LSTMCellArgs a;
  a.B = x.size(0), a.In = x.size(1), a.H = w_hh.size(1);
  a.x = x.data(), a.h = h.data(), a.c = c.data(), a.w_ih = w_ih.data(), a.w_hh = w_hh.data();
  if (w16.both()) {
    a.w_ih = w16.ih->data(), a.w_hh = w16.hh->data(), a.w_rounded = true;
    a.w_ih16 = w16.ih->bits(), a.w_hh16 = w16.hh->bits();
  }
  a.h1 = y.data(), a.c1 = y.data() + a.B * a.H, a.acts = acts.data();
  return a;
}

}  // namespace

Tensor lstm_cell_packed(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& w_ih,
                        const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  const int64_t H = check_shapes(x, h, c, w_ih, w_hh, b_ih, b_hh);
  const int64_t B = x.size(0), In = x.size(1), G = 4 * H;
  Tensor y = empty({2, B, H});     // [h'; c']
  Tensor acts = empty({B, G});     // the gates' activations, [i | f | g | o]
  const Bf16Weights w16(w_ih, w_hh);
  LSTMCellArgs a = kernel_args(x, h, c, w_ih, w_hh, y, acts, w16);
  a.b_ih = data_or_null(b_ih), a.b_hh = data_or_null(b_hh);
  lstm_cell_forward(a);
  // Saved: the inputs the gemms read (x, h, w_ih, w_hh), c, the activations, and c'
  // (inside y; captured detached, as an op may hold its own output).
  // The biases are saved for a create_graph pass, which differentiates the composed twin.
  return record("lstm_cell", y, {x, h, c, w_ih, w_hh, b_ih, b_hh}, kDoubleBackward,
                [x = SavedTensor(x), h = SavedTensor(h), c = SavedTensor(c),
                 w_ih = SavedTensor(w_ih), w_hh = SavedTensor(w_hh), b_ih = SavedTensor(b_ih),
                 b_hh = SavedTensor(b_hh), acts,
                 y = SavedTensor(y.detach()), B, In, H, G](const Tensor& dy, Grads& g) {
    if (g.create_graph())  // lstm_cell_reference, [h'; c'] (composed_backward.h)
      return detail::composed_gradients([](const std::vector<Tensor>& in) {
        const auto [h1, c1] = lstm_cell_reference(in[0], in[1], in[2], in[3], in[4], in[5], in[6]);
        return stack({h1, c1}, 0);
      }, {x, h, c, w_ih, w_hh, b_ih, b_hh}, dy, g);
    LSTMCellGrads d;
    d.dh1 = dy.data(), d.dc1 = dy.data() + B * H;  // dy = [dh'; dc']
    d.dx = g.write(0, {B, In}), d.dh = g.write(1, {B, H}), d.dc = g.write(2, {B, H});
    // The weights' gradients are added into their running sums over steps when there are any.
    const Grads::Out w_ih_sum = g.write_or_add(3, {G, In}), w_hh_sum = g.write_or_add(4, {G, H});
    d.dw_ih = w_ih_sum.data, d.beta_ih = w_ih_sum.beta;
    d.dw_hh = w_hh_sum.data, d.beta_hh = w_hh_sum.beta;
    if (g.needs(5) || g.needs(6)) {  // one (G) gradient for both biases
      const Tensor t = empty({G});
      d.db = t.data();
      for (int i : {5, 6})
        if (g.needs(i)) g[i] = t;
    }
    const Tensor dgates = empty({B, G});
    d.dgates = dgates.data();
    const Bf16Weights w16(w_ih, w_hh);
    lstm_cell_backward(kernel_args(x, h, c, w_ih, w_hh, y, acts, w16), d);
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
