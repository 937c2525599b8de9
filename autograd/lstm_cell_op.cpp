// lstm_cell_op.cpp - the fused LSTM step (forward, hand-written backward) and its reference.
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

#include "../core/blas.h"
#include "../core/error.h"
#include "../core/parallel.h"
#include "arith.h"
#include "linalg.h"
#include "lstm_gates.h"
#include "node.h"
#include "reduce.h"
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

// Forward, in four numbered steps; the backward undoes them in reverse order.
Tensor lstm_cell_packed(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& w_ih,
                        const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  const int64_t H = check_shapes(x, h, c, w_ih, w_hh, b_ih, b_hh);
  const int64_t B = x.size(0), In = x.size(1), G = 4 * H;

  // 1. gates = x W_ih^T + h W_hh^T           (B, 4H), two gemms, weights read transposed
  Tensor acts = empty({B, G});  // gates, then overwritten in place by their activations
  gemm(false, true, B, G, In, 1, x.data(), In, w_ih.data(), In, 0, acts.data(), G);
  gemm(false, true, B, G, H, 1, h.data(), H, w_hh.data(), H, 1, acts.data(), G);

  Tensor y = empty({2, B, H});  // [h'; c']
  {  // 2.-4. elementwise, a block of batch rows per thread
    const real* pbi = b_ih.defined() ? b_ih.data() : nullptr;
    const real* pbh = b_hh.defined() ? b_hh.data() : nullptr;
    const real* pc = c.data();
    real *pa = acts.data(), *ph1 = y.data(), *pc1 = y.data() + B * H;
    parallel_for(B, kGrainTranscendental / G + 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        real* a = pa + b * G;
        detail::lstm_gates_add_bias(a, pbi, pbh, H);  // gates += b_ih + b_hh
        // 2.-4. the gates, c' = f * c + i * g, h' = o * tanh(c')  (lstm_gates.h)
        detail::lstm_gates_forward(a, pc + b * H, pc1 + b * H, ph1 + b * H, H);
      }
    });
  }

  // Saved: the inputs the gemms read (x, h, w_ih, w_hh), c, the activations, and c'
  // (inside y; captured detached, as an op may hold its own output).
  return record("lstm_cell", y, {x, h, c, w_ih, w_hh, b_ih, b_hh},
                [x, h, c, w_ih, w_hh, acts, y = y.detach(), B, In, H, G](const Tensor& dy,
                                                                         Grads& g) {
    const real *pdh = dy.data(), *pdc1 = dy.data() + B * H;  // dy = [dh'; dc']
    const real *pa = acts.data(), *pc = c.data(), *pc1 = y.data() + B * H;
    Tensor dgates = empty({B, G});
    Tensor dc = g.needs(2) ? empty({B, H}) : Tensor();
    real *pdg = dgates.data(), *pdc = dc.defined() ? dc.data() : nullptr;
    parallel_for(B, kGrainTranscendental / G + 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)  // 4.-2. (lstm_gates.h)
        detail::lstm_gates_backward(pa + b * G, pc + b * H, pc1 + b * H, pdh + b * H, pdc1 + b * H,
                                    pdg + b * G, pdc ? pdc + b * H : nullptr, H);
    });
    // 1. gates = x W_ih^T + b_ih + h W_hh^T + b_hh
    //    dx = dgates W_ih   dW_ih = dgates^T x   db_ih = sum_b dgates   (and the same for h)
    if (g.needs(0)) {
      g[0] = empty({B, In});
      gemm(false, false, B, In, G, 1, pdg, G, w_ih.data(), In, 0, g[0].data(), In);
    }
    if (g.needs(1)) {
      g[1] = empty({B, H});
      gemm(false, false, B, H, G, 1, pdg, G, w_hh.data(), H, 0, g[1].data(), H);
    }
    if (g.needs(2)) g[2] = dc;
    if (g.needs(3)) {
      g[3] = empty({G, In});
      gemm(true, false, G, In, B, 1, pdg, G, x.data(), In, 0, g[3].data(), In);
    }
    if (g.needs(4)) {
      g[4] = empty({G, H});
      gemm(true, false, G, H, B, 1, pdg, G, h.data(), H, 0, g[4].data(), H);
    }
    if (g.needs(5) || g.needs(6)) {
      const Tensor db = sum(dgates, 0);  // (4H)
      if (g.needs(5)) g[5] = db;
      if (g.needs(6)) g[6] = db;
    }
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
