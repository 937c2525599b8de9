// lstm_layer_op.cpp - the fused LSTM layer: kernels and the recorded op (see lstm_layer_op.h).
//
// A heed Node has one output, so the op's output is [out | h_n | c_n] flattened into one
// (B*T*H + 2*B*H) tensor and lstm_layer() cuts it into its three parts (as lstm_cell_packed
// does with [h'; c']); the gradient arrives packed the same way.
//
// Its composed twin is the per-step loop in layers/recurrent_scan.cpp running lstm_cell_reference;
// tests/test_lstm_layer.cpp proves they agree, values and gradients, padded, both directions.
#include "lstm_layer_op.h"

#include <algorithm>
#include <cstring>

#include "../core/blas.h"
#include "../core/error.h"
#include "../core/packed_gemm.h"
#include "../core/parallel.h"
#include "layer_steps.h"
#include "lstm_gates.h"
#include "node.h"
#include "shape_ops.h"

namespace heed {

void lstm_layer_forward(real* out, real* h, real* c, real* acts, real* hx, real* c_prev,
                        const real* x, const real* w_ih, const real* w_hh, const real* b_ih,
                        const real* b_hh, const int64_t* len, bool reverse, int64_t B, int64_t T,
                        int64_t In, int64_t H) {
  const int64_t G = 4 * H, max_len = detail::longest(len, B, T);
  // 1. acts = b_ih + b_hh in every row, then acts += x W_ih^T   (B*T, 4H), one GEMM for
  //    every step. (The GEMM with beta = 1 adds to the biases; with beta = 0 OpenBLAS would
  //    first clear all of acts on one thread, and the biases need a pass of their own.)
  parallel_for(B * T, kGrainElementwise / G + 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      std::fill_n(acts + r * G, G, real(0));
      detail::lstm_gates_add_bias(acts + r * G, b_ih, b_hh, H);
    }
  });
  gemm(false, true, B * T, G, In, 1, x, In, w_ih, In, 1, acts, G);
  // x_t beside h_{t-1} in hx, for the backward's one weight-gradient GEMM
  const int64_t HX = H + In;
  parallel_for(B * T, kGrainElementwise / In + 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) std::copy_n(x + r * In, In, hx + r * HX + H);
  });
  // 2. the recurrence, in one parallel region (core/parallel.h, run_team). Thread p owns the
  //    hidden units [j0, j1): it packs the rows of W_hh that make their four gates once
  //    (core/packed_gemm.h), and at each step computes those gate columns and those units' h
  //    and c. The product reads every unit of h_{t-1}, so the threads meet once per step, after
  //    each has stored its units of the state the step starts from.
  run_team(detail::recurrence_threads(B, G, H), [&](const Team& team) {
    const std::pair<int64_t, int64_t> units = detail::units_of(team.rank, team.size, H);
    const int64_t j0 = units.first, j1 = units.second;  // clang 14: no lambda captures a binding
    const int64_t n = j1 - j0;
    std::vector<PackedB> w;  // allocates: in prepare (core/parallel.h), which may throw
    if (!team.prepare([&] { w = detail::pack_gate_columns(w_hh, 4, H, j0, n); })) return;
    for (int64_t k = 0; k < T; ++k) {
      const int64_t t = detail::step_at(k, T, reverse);
      if (t >= max_len) {  // every row is padding here: output 0, state kept, nothing saved
        for (int64_t b = 0; b < B; ++b) {
          std::fill_n(out + (b * T + t) * H + j0, n, real(0));
          std::fill_n(hx + (b * T + t) * HX + j0, n, real(0));
          std::fill_n(c_prev + (b * T + t) * H + j0, n, real(0));
        }
        continue;
      }
      for (int64_t b = 0; b < B; ++b) {  // the state this step starts from
        std::copy_n(h + b * H + j0, n, hx + (b * T + t) * HX + j0);
        std::copy_n(c + b * H + j0, n, c_prev + (b * T + t) * H + j0);
      }
      team.barrier();
      // gates_t += h_{t-1} W_hh^T   rows b of acts at step t (leading dimension T * 4H), this
      //                             thread's columns; h_{t-1} is in hx at step t (ld T * HX)
      for (int q = 0; q < 4; ++q)
        gemm_packed(false, B, hx + t * HX, T * HX, w[q], 1, true, acts + t * G + q * H + j0, T * G);
      for (int64_t b = 0; b < B; ++b) {
        real* o = out + (b * T + t) * H + j0;
        if (!detail::step_valid(len, b, t)) {  // padded: state kept, output 0
          std::fill_n(o, n, real(0));
          continue;
        }
        // h, c = the cell's step, in place (lstm_gates.h); out_t = h
        real *hb = h + b * H + j0, *cb = c + b * H + j0;
        detail::lstm_gates_forward(acts + (b * T + t) * G + j0, H, cb, cb, hb, n);
        std::copy_n(hb, n, o);
      }
    }
  });
}

void lstm_layer_backward(real* dx, real* dw_ih, real* dw_hh, real* db, real* dh, real* dc,
                         real* dgates, const real* dout, const real* acts, const real* hx,
                         const real* c_prev, const real* w_ih, const real* w_hh,
                         const int64_t* len, bool reverse, int64_t B, int64_t T, int64_t In,
                         int64_t H) {
  const int64_t G = 4 * H, max_len = detail::longest(len, B, T);
  // undo 2., the recurrence, last step first, in one parallel region as the forward: thread p
  // owns the units [j0, j1), their gate columns of dgates and their columns of dh and dc.
  run_team(detail::recurrence_threads(B, G, H), [&](const Team& team) {
    const std::pair<int64_t, int64_t> units = detail::units_of(team.rank, team.size, H);
    const int64_t j0 = units.first, j1 = units.second;  // clang 14: no lambda captures a binding
    const int64_t n = j1 - j0;
    PackedB w;              // W_hh[:, j0:j1]   (4H, n)
    std::vector<real> c1;   // c after the step, recomputed: c' = f * c + i * g   (n)
    if (!team.prepare([&] {  // allocates: in prepare (core/parallel.h), which may throw
          pack_b(w, w_hh + j0, false, H, G, n);
          c1.resize(n);
        }))
      return;
    const auto zero_gates = [&](int64_t b, int64_t t) {
      for (int q = 0; q < 4; ++q) std::fill_n(dgates + (b * T + t) * G + q * H + j0, n, real(0));
    };
    for (int64_t k = T - 1; k >= 0; --k) {
      const int64_t t = detail::step_at(k, T, reverse);
      if (t >= max_len) {  // no step was taken: nothing flows to W or x
        for (int64_t b = 0; b < B; ++b) zero_gates(b, t);
        continue;
      }
      for (int64_t b = 0; b < B; ++b) {
        if (!detail::step_valid(len, b, t)) {  // padded: dh, dc pass through, nothing added
          zero_gates(b, t);
          continue;
        }
        const real* a = acts + (b * T + t) * G + j0;
        const real* cp = c_prev + (b * T + t) * H + j0;
        const real* d_out = dout + (b * T + t) * H + j0;
        for (int64_t j = 0; j < n; ++j) c1[j] = a[H + j] * cp[j] + a[j] * a[2 * H + j];
        real *dhb = dh + b * H + j0, *dcb = dc + b * H + j0;
        for (int64_t j = 0; j < n; ++j) dhb[j] += d_out[j];  // out_t = h': dh' = dh + dout_t
        detail::lstm_gates_backward(a, H, cp, c1.data(), dhb, dcb,
                                    dgates + (b * T + t) * G + j0, dcb, n);
        std::fill_n(dhb, n, real(0));  // h reaches h' only through the gates: dh = dgates_t W_hh
      }
      team.barrier();  // every gate column of dgates_t is written
      // gates_t += h W_hh^T:   dh += dgates_t W_hh, this thread's columns of dh
      //                        (padded rows have dgates_t = 0: dh kept)
      gemm_packed(false, B, dgates + t * G, T * G, w, 1, true, dh + j0, H);
    }
  });
  // dW_hh = dgates^T h_prev over every step at once (padded steps have dgates = 0), and, undoing
  // 1. (acts = x W_ih^T + b_ih + b_hh), dW_ih = dgates^T x: one GEMM, [dW_hh | dW_ih] =
  // dgates^T [h_prev | x], so that BLAS packs the (B*T, 4H) dgates once, not twice
  const int64_t HX = H + In;
  if (dw_hh && dw_ih) {
    std::vector<real> dw(G * HX);  // (4H, H + In)
    gemm(true, false, G, HX, B * T, 1, dgates, G, hx, HX, 0, dw.data(), HX);
    for (int64_t r = 0; r < G; ++r) {
      std::copy_n(dw.data() + r * HX, H, dw_hh + r * H);
      std::copy_n(dw.data() + r * HX + H, In, dw_ih + r * In);
    }
  } else if (dw_hh) {
    gemm(true, false, G, H, B * T, 1, dgates, G, hx, HX, 0, dw_hh, H);
  } else if (dw_ih) {
    gemm(true, false, G, In, B * T, 1, dgates, G, hx + H, HX, 0, dw_ih, In);
  }
  //   dx = dgates W_ih,  db = sum dgates
  if (dx) gemm(false, false, B * T, In, G, 1, dgates, G, w_ih, In, 0, dx, In);
  if (db) detail::column_sums(db, dgates, B * T, G);
}

LSTMLayerOut lstm_layer(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_ih,
                        const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                        const std::vector<int64_t>& lengths, bool reverse) {
  detail::check_layer_args("lstm_layer", 4, x, {h0, c0}, w_ih, w_hh, b_ih, b_hh, lengths);
  const int64_t B = x.size(0), T = x.size(1), In = x.size(2), H = w_hh.size(1), G = 4 * H;
  const int64_t BTH = B * T * H, BH = B * H;
  Tensor y = empty({BTH + 2 * BH});  // [out | h_n | c_n]
  Tensor acts = empty({B, T, G}), hx = empty({B, T, H + In}), c_prev = empty({B, T, H});
  std::copy_n(h0.data(), BH, y.data() + BTH);
  std::copy_n(c0.data(), BH, y.data() + BTH + BH);
  const int64_t* len = lengths.empty() ? nullptr : lengths.data();
  lstm_layer_forward(y.data(), y.data() + BTH, y.data() + BTH + BH, acts.data(), hx.data(),
                     c_prev.data(), x.data(), w_ih.data(), w_hh.data(),
                     data_or_null(b_ih), data_or_null(b_hh), len, reverse, B, T, In, H);

  // Saved: the weights the GEMMs read, the activations, and each step's [h_{t-1} | x_t] and c_{t-1}.
  const Tensor packed = record(
      "lstm_layer", y, {x, h0, c0, w_ih, w_hh, b_ih, b_hh},
      [w_ih = SavedTensor(w_ih), w_hh = SavedTensor(w_hh), acts, hx, c_prev, lengths, reverse, B, T,
       In, H, G, BTH,
       BH](const Tensor& dy, Grads& g) {
        Tensor dx = g.needs(0) ? empty({B, T, In}) : Tensor();
        Tensor dh = empty({B, H}), dc = empty({B, H});
        std::copy_n(dy.data() + BTH, BH, dh.data());       // dh_n
        std::copy_n(dy.data() + BTH + BH, BH, dc.data());  // dc_n
        Tensor dw_ih = g.needs(3) ? empty({G, In}) : Tensor();
        Tensor dw_hh = g.needs(4) ? empty({G, H}) : Tensor();
        Tensor db = g.needs(5) || g.needs(6) ? empty({G}) : Tensor();
        Tensor dgates = empty({B, T, G});
        lstm_layer_backward(data_or_null(dx), data_or_null(dw_ih), data_or_null(dw_hh),
                            data_or_null(db), dh.data(), dc.data(),
                            dgates.data(), dy.data(), acts.data(), hx.data(), c_prev.data(),
                            w_ih.data(), w_hh.data(),
                            lengths.empty() ? nullptr : lengths.data(), reverse, B, T, In, H);
        if (g.needs(0)) g[0] = dx;
        if (g.needs(1)) g[1] = dh;
        if (g.needs(2)) g[2] = dc;
        if (g.needs(3)) g[3] = dw_ih;
        if (g.needs(4)) g[4] = dw_hh;
        if (g.needs(5)) g[5] = db;
        if (g.needs(6)) g[6] = db;
      });
  return {narrow(packed, 0, 0, BTH).reshape({B, T, H}), narrow(packed, 0, BTH, BH).reshape({B, H}),
          narrow(packed, 0, BTH + BH, BH).reshape({B, H})};
}

}  // namespace heed
