// lstm_layer.cpp - the fused LSTM layer: kernels and the recorded op (see lstm_layer.h).
//
// A heed Node has one output, so the op's output is [out | h_n | c_n] flattened into one
// (B*T*H + 2*B*H) tensor and lstm_layer() cuts it into its three parts (as lstm_cell_packed
// does with [h'; c']); the gradient arrives packed the same way.
//
// Its composed twin is the per-step loop in layers/recurrent_scan.cpp running lstm_cell_reference;
// tests/test_lstm_layer.cpp proves they agree, values and gradients, padded, both directions.
#include "lstm_layer.h"

#include <algorithm>
#include <cstring>

#include "../../core/blas.h"
#include "../../core/error.h"
#include "../../core/packed_gemm.h"
#include "../../core/parallel.h"
#include "../engine/node.h"
#include "layer_steps.h"
#include "lstm_gates.h"
#include "shape.h"

namespace heed {

void lstm_layer_forward(const LSTMLayerArgs& a) {
  const int64_t B = a.B, T = a.T, In = a.In, H = a.H, G = 4 * H, HX = H + In;
  // 1. acts = b_ih + b_hh in every row, then acts += x W_ih^T   (B*T, 4H), one GEMM for
  //    every step. (The GEMM with beta = 1 adds to the biases; with beta = 0 OpenBLAS would
  //    first clear all of acts on one thread, and the biases need a pass of their own.)
  parallel_for(B * T, kGrainElementwise / G + 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      std::fill_n(a.acts + r * G, G, real(0));
      detail::lstm_gates_add_bias(a.acts + r * G, a.b_ih, a.b_hh, H);
    }
  });
  gemm(false, true, B * T, G, In, 1, a.x, In, a.w_ih, In, 1, a.acts, G);
  // x_t beside h_{t-1} in hx, for the backward's one weight-gradient GEMM
  parallel_for(B * T, kGrainElementwise / In + 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) std::copy_n(a.x + r * In, In, a.hx + r * HX + H);
  });
  // 2. the recurrence (layer_steps.h). Thread p owns the hidden units u: it packs the rows of
  //    W_hh that make their four gates once (core/packed_gemm.h), and at each step computes
  //    those gate columns and those units' h and c. The product reads every unit of h_{t-1},
  //    so the threads meet once per step, after each has stored its units of the state the
  //    step starts from.
  using Packed = std::vector<PackedB>;  // W_hh^T's columns of gate q, q = 0..3   (H, n) each
  detail::recurrence<Packed>(
      a, 4, detail::Walk::forward,
      [&](Packed& w, detail::Units u) { w = detail::pack_gate_columns(a.w_hh, 4, H, u.j0, u.n); },
      [&](detail::Units u, int64_t t) {  // every row is padding: output 0, state kept, nothing saved
        for (int64_t b = 0; b < B; ++b) {
          std::fill_n(a.out + (b * T + t) * H + u.j0, u.n, real(0));
          std::fill_n(a.hx + (b * T + t) * HX + u.j0, u.n, real(0));
          std::fill_n(a.c_prev + (b * T + t) * H + u.j0, u.n, real(0));
        }
      },
      [&](const Packed& w, detail::Units u, int64_t t, const Team& team) {
        for (int64_t b = 0; b < B; ++b) {  // the state this step starts from
          std::copy_n(a.h + b * H + u.j0, u.n, a.hx + (b * T + t) * HX + u.j0);
          std::copy_n(a.c + b * H + u.j0, u.n, a.c_prev + (b * T + t) * H + u.j0);
        }
        team.barrier();
        // gates_t += h_{t-1} W_hh^T   rows b of acts at step t (leading dimension T * 4H), this
        //                             thread's columns; h_{t-1} is in hx at step t (ld T * HX)
        for (int q = 0; q < 4; ++q)
          gemm_packed(false, B, a.hx + t * HX, T * HX, w[q], 1, true,
                      a.acts + t * G + q * H + u.j0, T * G);
        // h, c = the cell's step, in place (lstm_gates.h), valid rows only
        detail::forward_rows(a, u, t, a.out, a.h, [&](int64_t b) {
          real *hb = a.h + b * H + u.j0, *cb = a.c + b * H + u.j0;
          detail::lstm_gates_forward(a.acts + (b * T + t) * G + u.j0, H, cb, cb, hb, u.n);
        });
      });
}

void lstm_layer_backward(const LSTMLayerArgs& a, const LSTMLayerGrads& g) {
  const int64_t B = a.B, T = a.T, In = a.In, H = a.H, G = 4 * H, HX = H + In;
  // undo 2., the recurrence, last step first, as the forward (layer_steps.h): thread p owns
  // the units u, their gate columns of dgates and their columns of dh and dc.
  struct Local {
    PackedB w;             // W_hh[:, j0:j1]   (4H, n)
    std::vector<real> c1;  // c after the step, recomputed: c' = f * c + i * g   (n)
  };
  const auto zero_gates = [&](detail::Units u, int64_t b, int64_t t) {
    for (int q = 0; q < 4; ++q) std::fill_n(g.dgates + (b * T + t) * G + q * H + u.j0, u.n, real(0));
  };
  detail::recurrence<Local>(
      a, 4, detail::Walk::backward,
      [&](Local& l, detail::Units u) {
        pack_b(l.w, a.w_hh + u.j0, false, H, G, u.n);
        l.c1.resize(u.n);
      },
      [&](detail::Units u, int64_t t) {  // no step was taken: nothing flows to W or x
        for (int64_t b = 0; b < B; ++b) zero_gates(u, b, t);
      },
      [&](Local& l, detail::Units u, int64_t t, const Team& team) {
        const int64_t n = u.n;
        for (int64_t b = 0; b < B; ++b) {
          if (!detail::step_valid(a.len, b, t)) {  // padded: dh, dc pass through, nothing added
            zero_gates(u, b, t);
            continue;
          }
          const real* acts = a.acts + (b * T + t) * G + u.j0;
          const real* cp = a.c_prev + (b * T + t) * H + u.j0;
          const real* d_out = g.dout + (b * T + t) * H + u.j0;
          for (int64_t j = 0; j < n; ++j) l.c1[j] = acts[H + j] * cp[j] + acts[j] * acts[2 * H + j];
          real *dhb = g.dh + b * H + u.j0, *dcb = g.dc + b * H + u.j0;
          for (int64_t j = 0; j < n; ++j) dhb[j] += d_out[j];  // out_t = h': dh' = dh + dout_t
          detail::lstm_gates_backward(acts, H, cp, l.c1.data(),
                                      {dhb, dcb, g.dgates + (b * T + t) * G + u.j0, dcb}, n);
          std::fill_n(dhb, n, real(0));  // h reaches h' only through the gates: dh = dgates_t W_hh
        }
        team.barrier();  // every gate column of dgates_t is written
        // gates_t += h W_hh^T:   dh += dgates_t W_hh, this thread's columns of dh
        //                        (padded rows have dgates_t = 0: dh kept)
        gemm_packed(false, B, g.dgates + t * G, T * G, l.w, 1, true, g.dh + u.j0, H);
      });
  // dW_hh = dgates^T h_prev over every step at once (padded steps have dgates = 0), and, undoing
  // 1. (acts = x W_ih^T + b_ih + b_hh), dW_ih = dgates^T x: one GEMM, [dW_hh | dW_ih] =
  // dgates^T [h_prev | x], so that BLAS packs the (B*T, 4H) dgates once, not twice
  // Under "medium" dgates is rounded once for the weight-gradient GEMM and dx's (core/blas.h).
  const Bf16Matrix dg(g.dgates, G, B * T, g.dw_hh || g.dw_ih || g.dx ? G : 0);  // (B*T, 4H)
  const Bf16Inputs a_rounded = dg.as_a();
  if (g.dw_hh && g.dw_ih) {
    std::vector<real> dw(G * HX);  // (4H, H + In)
    gemm(a_rounded, true, false, G, HX, B * T, 1, dg.data(), dg.ld(), a.hx, HX, 0, dw.data(), HX);
    for (int64_t r = 0; r < G; ++r) {
      std::copy_n(dw.data() + r * HX, H, g.dw_hh + r * H);
      std::copy_n(dw.data() + r * HX + H, In, g.dw_ih + r * In);
    }
  } else if (g.dw_hh) {
    gemm(a_rounded, true, false, G, H, B * T, 1, dg.data(), dg.ld(), a.hx, HX, 0, g.dw_hh, H);
  } else if (g.dw_ih) {
    gemm(a_rounded, true, false, G, In, B * T, 1, dg.data(), dg.ld(), a.hx + H, HX, 0, g.dw_ih, In);
  }
  //   dx = dgates W_ih,  db = sum dgates
  if (g.dx) gemm(a_rounded, false, false, B * T, In, G, 1, dg.data(), dg.ld(), a.w_ih, In, 0, g.dx, In);
  if (g.db) detail::column_sums(g.db, g.dgates, B * T, G);
}

LSTMLayerOut lstm_layer(const Tensor& x, const Tensor& h0, const Tensor& c0,
                        const RecurrentWeights& w, const std::vector<int64_t>& lengths,
                        bool reverse) {
  detail::check_layer_args("lstm_layer", 4, x, {h0, c0}, w, lengths);
  LSTMLayerArgs a;
  detail::set_layer_inputs(a, x, w, lengths, reverse);
  const int64_t B = a.B, T = a.T, In = a.In, H = a.H, G = 4 * H;
  const int64_t BTH = B * T * H, BH = B * H;
  Tensor y = empty({BTH + 2 * BH});  // [out | h_n | c_n]
  Tensor acts = empty({B, T, G}), hx = empty({B, T, H + In}), c_prev = empty({B, T, H});
  std::copy_n(h0.data(), BH, y.data() + BTH);
  std::copy_n(c0.data(), BH, y.data() + BTH + BH);
  a.out = y.data(), a.h = y.data() + BTH, a.c = y.data() + BTH + BH;
  a.acts = acts.data(), a.hx = hx.data(), a.c_prev = c_prev.data();
  lstm_layer_forward(a);

  // Saved: the weights the GEMMs read, the activations, and each step's [h_{t-1} | x_t] and c_{t-1}.
  const Tensor packed = record(
      "lstm_layer", y, {x, h0, c0, w.w_ih, w.w_hh, w.b_ih, w.b_hh},
      [w_ih = SavedTensor(w.w_ih), w_hh = SavedTensor(w.w_hh), acts, hx, c_prev, lengths, a, B,
       T, In, H, G, BTH, BH](const Tensor& dy, Grads& g) {
        Tensor dx = g.needs(0) ? empty({B, T, In}) : Tensor();
        Tensor dh = empty({B, H}), dc = empty({B, H});
        std::copy_n(dy.data() + BTH, BH, dh.data());       // dh_n
        std::copy_n(dy.data() + BTH + BH, BH, dc.data());  // dc_n
        Tensor dw_ih = g.needs(3) ? empty({G, In}) : Tensor();
        Tensor dw_hh = g.needs(4) ? empty({G, H}) : Tensor();
        Tensor db = g.needs(5) || g.needs(6) ? empty({G}) : Tensor();
        LSTMLayerGrads d;
        d.dout = dy.data(), d.dh = dh.data(), d.dc = dc.data(), d.dx = data_or_null(dx);
        d.dw_ih = data_or_null(dw_ih), d.dw_hh = data_or_null(dw_hh), d.db = data_or_null(db);
        const Tensor dgates = empty({B, T, G});
        d.dgates = dgates.data();
        LSTMLayerArgs fwd = a;  // the sizes, and acts, hx, c_prev (this closure holds them)
        fwd.len = lengths.empty() ? nullptr : lengths.data();  // the closure's copy
        fwd.w_ih = w_ih.data(), fwd.w_hh = w_hh.data();
        fwd.x = fwd.b_ih = fwd.b_hh = nullptr, fwd.out = fwd.h = fwd.c = nullptr;  // not read
        lstm_layer_backward(fwd, d);
        const Tensor grads[] = {dx, dh, dc, dw_ih, dw_hh, db, db};
        for (int i = 0; i < 7; ++i)
          if (g.needs(i)) g[i] = grads[i];
      });
  return {narrow(packed, 0, 0, BTH).reshape({B, T, H}), narrow(packed, 0, BTH, BH).reshape({B, H}),
          narrow(packed, 0, BTH + BH, BH).reshape({B, H})};
}

}  // namespace heed
