// gru_layer.cpp - the fused GRU layer: kernels, the recorded op and its composed reference
// (see gru_layer.h).
//
// A heed Node has one output, so the op's output is [out | h_n] flattened into one
// (B*T*H + B*H) tensor and gru_layer() cuts it into its two parts (as lstm_layer does); the
// gradient arrives packed the same way.
//
// Its composed twin is the per-step loop in layers/recurrent_scan.cpp running
// gru_cell_reference; tests/test_gru_layer.cpp proves they agree, values and gradients,
// padded, both directions.
#include "gru_layer.h"

#include <algorithm>

#include "../../core/blas.h"
#include "../../core/cpu.h"
#include "../../core/error.h"
#include "../../core/fastmath.h"
#include "../../core/packed_gemm.h"
#include "../../core/parallel.h"
#include "../engine/node.h"
#include "arith.h"
#include "layer_steps.h"
#include "linear.h"
#include "shape.h"
#include "unary.h"

namespace heed {

namespace {

// The elementwise half of one GRU step for one batch row and n hidden units, forward and
// backward. Gate q of unit j is at [q*H + j] (H, the gate stride, is the layer's hidden size;
// a fused layer's thread passes its own units, pointers to the first and n < H). One short
// loop per result, so that each vectorises (as lstm_gates.h).
//   a = [gi_r | gi_z | gi_n | .] (4 blocks): x W_ih^T + b_ih, with b_hr and b_hz already added
//   gh = [gh_r | gh_z | gh_n] (3 blocks): h W_hh^T;  b_hn (n) or null
// Leaves a = [r | z | n | hn] and h (n) = h'.
void gru_row_forward(real* a, const real* gh, const real* b_hn, real* h, int64_t H, int64_t n) {
  run_at_cpu_level([&] {  // the loops at the CPU's vector width (core/cpu.h)
    real *r = a, *z = a + H, *nn = a + 2 * H, *hn = a + 3 * H;
    // r = sigmoid(gi_r + gh_r)     z = sigmoid(gi_z + gh_z)
    for (int64_t j = 0; j < n; ++j) r[j] = fastmath::sigmoid(r[j] + gh[j]);
    for (int64_t j = 0; j < n; ++j) z[j] = fastmath::sigmoid(z[j] + gh[H + j]);
    // hn = gh_n + b_hn             n = tanh(gi_n + r * hn)
    for (int64_t j = 0; j < n; ++j) hn[j] = gh[2 * H + j] + (b_hn ? b_hn[j] : real(0));
    for (int64_t j = 0; j < n; ++j) nn[j] = fastmath::tanh(nn[j] + r[j] * hn[j]);
    // h' = (1 - z) * n + z * h  =  n + z * (h - n)
    for (int64_t j = 0; j < n; ++j) h[j] = nn[j] + z[j] * (h[j] - nn[j]);
  });
}

// a = [r | z | n | hn] and h (n units, the state the step began from) as in the forward; dh
// (n) holds dh' on entry and, on return, the part of dh that does not go through W_hh: dh' * z.
// Writes dgi = [da_r | da_z | da_n] and dgh = [da_r | da_z | dhn] (gate stride H), the
// gradients of gi and gh (a_r, a_z, a_n the pre-activations of r, z, n).
void gru_row_backward(const real* a, const real* h, real* dh, real* dgi, real* dgh, int64_t H,
                      int64_t n) {
  run_at_cpu_level([&] {  // the loops at the CPU's vector width (core/cpu.h)
    const real *r = a, *z = a + H, *nn = a + 2 * H, *hn = a + 3 * H;
    real *da_r = dgi, *da_z = dgi + H, *da_n = dgi + 2 * H, *dhn = dgh + 2 * H;
    // h' = n + z * (h - n):   dn = dh' * (1 - z)    dz = dh' * (h - n)    dh = dh' * z
    // n = tanh(a_n):          da_n = dn * (1 - n^2)
    // z = sigmoid(a_z):       da_z = dz * z * (1 - z)
    for (int64_t j = 0; j < n; ++j) da_n[j] = dh[j] * (1 - z[j]) * (1 - nn[j] * nn[j]);
    for (int64_t j = 0; j < n; ++j) da_z[j] = dh[j] * (h[j] - nn[j]) * z[j] * (1 - z[j]);
    for (int64_t j = 0; j < n; ++j) dh[j] *= z[j];
    // a_n = gi_n + r * hn:    dgi_n = da_n    dr = da_n * hn    dhn = da_n * r
    // r = sigmoid(a_r):       da_r = dr * r * (1 - r)
    for (int64_t j = 0; j < n; ++j) da_r[j] = da_n[j] * hn[j] * r[j] * (1 - r[j]);
    for (int64_t j = 0; j < n; ++j) dhn[j] = da_n[j] * r[j];
    // a_r = gi_r + gh_r, a_z = gi_z + gh_z: gi and gh share these gradients
    std::copy_n(da_r, n, dgh);
    std::copy_n(da_z, n, dgh + H);
  });
}

}  // namespace

void gru_layer_forward(const GRULayerArgs& a) {
  const int64_t B = a.B, T = a.T, In = a.In, H = a.H, G = 3 * H, A = 4 * H;
  // 1. gi = b_ih + [b_hr | b_hz | 0] in every row, then gi += x W_ih^T   into acts[:, :3H],
  //    one GEMM for every step (beta = 1 adds to the biases: no separate clearing pass)
  parallel_for(B * T, kGrainElementwise / G + 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      real* acts = a.acts + r * A;
      std::fill_n(acts, G, real(0));
      if (a.b_ih)
        for (int64_t k = 0; k < G; ++k) acts[k] += a.b_ih[k];
      if (a.b_hh)
        for (int64_t k = 0; k < 2 * H; ++k) acts[k] += a.b_hh[k];
    }
  });
  gemm(false, true, B * T, G, In, 1, a.x, In, a.w_ih, In, 1, a.acts, A);
  const real* b_hn = a.b_hh ? a.b_hh + 2 * H : nullptr;
  std::vector<real> gh(B * G);  // (B, 3H)
  // 2. the recurrence (layer_steps.h), split by hidden units as lstm_layer_forward's: thread p
  //    owns the units u, the rows of W_hh that make their three gates (packed once), their
  //    columns of gh and their units of h. One barrier per step.
  using Packed = std::vector<PackedB>;  // W_hh^T's columns of gate q, q = 0..2   (H, n) each
  detail::recurrence<Packed>(
      a, 3, detail::Walk::forward,
      [&](Packed& w, detail::Units u) { w = detail::pack_gate_columns(a.w_hh, 3, H, u.j0, u.n); },
      [&](detail::Units u, int64_t t) {  // every row is padding: output 0, state kept, nothing saved
        for (int64_t b = 0; b < B; ++b)
          for (real* p : {a.out, a.h_prev}) std::fill_n(p + (b * T + t) * H + u.j0, u.n, real(0));
      },
      [&](const Packed& w, detail::Units u, int64_t t, const Team& team) {
        for (int64_t b = 0; b < B; ++b)  // the state this step starts from
          std::copy_n(a.h + b * H + u.j0, u.n, a.h_prev + (b * T + t) * H + u.j0);
        team.barrier();
        // gh = h_{t-1} W_hh^T, this thread's columns; h_{t-1} is h_prev at step t (ld T * H)
        for (int q = 0; q < 3; ++q)
          gemm_packed(false, B, a.h_prev + t * H, T * H, w[q], 1, false,
                      gh.data() + q * H + u.j0, G);
        // h = the elementwise step, in place (gru_row_forward), valid rows only
        detail::forward_rows(a, u, t, a.out, a.h, [&](int64_t b) {
          gru_row_forward(a.acts + (b * T + t) * A + u.j0, gh.data() + b * G + u.j0,
                          b_hn ? b_hn + u.j0 : nullptr, a.h + b * H + u.j0, H, u.n);
        });
      });
}

void gru_layer_backward(const GRULayerArgs& a, const GRULayerGrads& g) {
  const int64_t B = a.B, T = a.T, In = a.In, H = a.H, G = 3 * H, A = 4 * H;
  // undo 2., the recurrence, last step first, as the forward (layer_steps.h): thread p owns
  // the units u, their gate columns of dgi and dgh and their columns of dh.
  const auto zero_gates = [&](detail::Units u, int64_t b, int64_t t) {
    for (real* p : {g.dgi, g.dgh})
      for (int q = 0; q < 3; ++q) std::fill_n(p + (b * T + t) * G + q * H + u.j0, u.n, real(0));
  };
  detail::recurrence<PackedB>(  // W_hh[:, j0:j1]   (3H, n)
      a, 3, detail::Walk::backward,
      [&](PackedB& w, detail::Units u) { pack_b(w, a.w_hh + u.j0, false, H, G, u.n); },
      [&](detail::Units u, int64_t t) {  // no step was taken: nothing flows to W or x
        for (int64_t b = 0; b < B; ++b) zero_gates(u, b, t);
      },
      [&](const PackedB& w, detail::Units u, int64_t t, const Team& team) {
        for (int64_t b = 0; b < B; ++b) {
          if (!detail::step_valid(a.len, b, t)) {  // padded: dh passes through, adds nothing
            zero_gates(u, b, t);
            continue;
          }
          real* dhb = g.dh + b * H + u.j0;  // out_t = h': dh' = dh + dout_t
          const real* d_out = g.dout + (b * T + t) * H + u.j0;
          for (int64_t j = 0; j < u.n; ++j) dhb[j] += d_out[j];
          gru_row_backward(a.acts + (b * T + t) * A + u.j0, a.h_prev + (b * T + t) * H + u.j0,
                           dhb, g.dgi + (b * T + t) * G + u.j0, g.dgh + (b * T + t) * G + u.j0,
                           H, u.n);
        }
        team.barrier();  // every gate column of dgh_t is written
        // gh = h W_hh^T:   dh += dgh_t W_hh, this thread's columns of dh
        //                  (padded rows have dgh_t = 0 and keep their dh)
        gemm_packed(false, B, g.dgh + t * G, T * G, w, 1, true, g.dh + u.j0, H);
      });
  // dW_hh = dgh^T h_prev, db_hh = sum dgh, over every step at once (0 rows at padded steps)
  if (g.dw_hh) gemm(true, false, G, H, B * T, 1, g.dgh, G, a.h_prev, H, 0, g.dw_hh, H);
  if (g.db_hh) detail::column_sums(g.db_hh, g.dgh, B * T, G);
  // undo 1., gi = x W_ih^T + b_ih:   dW_ih = dgi^T x,  dx = dgi W_ih,  db_ih = sum dgi
  //   (under "medium" dgi is rounded once for both products, core/blas.h)
  const Bf16Matrix dgi(g.dgi, G, B * T, g.dw_ih || g.dx ? G : 0);  // (B*T, 3H)
  const Bf16Inputs a_rounded = dgi.as_a();
  if (g.dw_ih) gemm(a_rounded, true, false, G, In, B * T, 1, dgi.data(), dgi.ld(), a.x, In, 0, g.dw_ih, In);
  if (g.dx) gemm(a_rounded, false, false, B * T, In, G, 1, dgi.data(), dgi.ld(), a.w_ih, In, 0, g.dx, In);
  if (g.db_ih) detail::column_sums(g.db_ih, g.dgi, B * T, G);
}

GRULayerOut gru_layer(const Tensor& x, const Tensor& h0, const RecurrentWeights& w,
                      const std::vector<int64_t>& lengths, bool reverse) {
  detail::check_layer_args("gru_layer", 3, x, {h0}, w, lengths);
  GRULayerArgs a;
  detail::set_layer_inputs(a, x, w, lengths, reverse);
  const int64_t B = a.B, T = a.T, In = a.In, H = a.H, G = 3 * H;
  const int64_t BTH = B * T * H, BH = B * H;
  Tensor y = empty({BTH + BH});  // [out | h_n]
  Tensor acts = empty({B, T, 4 * H}), h_prev = empty({B, T, H});
  std::copy_n(h0.data(), BH, y.data() + BTH);
  a.out = y.data(), a.h = y.data() + BTH, a.acts = acts.data(), a.h_prev = h_prev.data();
  gru_layer_forward(a);

  // Saved: x and the weights the GEMMs read, the activations and the states each step began with.
  const Tensor packed = record(
      "gru_layer", y, {x, h0, w.w_ih, w.w_hh, w.b_ih, w.b_hh},
      [x = SavedTensor(x), w_ih = SavedTensor(w.w_ih), w_hh = SavedTensor(w.w_hh), acts, h_prev,
       lengths, a, B, T, In, H, G, BTH, BH](const Tensor& dy, Grads& g) {
        Tensor dx = g.needs(0) ? empty({B, T, In}) : Tensor();
        Tensor dh = empty({B, H});
        std::copy_n(dy.data() + BTH, BH, dh.data());  // dh_n
        Tensor dw_ih = g.needs(2) ? empty({G, In}) : Tensor();
        Tensor dw_hh = g.needs(3) ? empty({G, H}) : Tensor();
        Tensor db_ih = g.needs(4) ? empty({G}) : Tensor();
        Tensor db_hh = g.needs(5) ? empty({G}) : Tensor();
        const Tensor dgi = empty({B, T, G}), dgh = empty({B, T, G});
        GRULayerGrads d;
        d.dout = dy.data(), d.dh = dh.data(), d.dx = data_or_null(dx);
        d.dw_ih = data_or_null(dw_ih), d.dw_hh = data_or_null(dw_hh);
        d.db_ih = data_or_null(db_ih), d.db_hh = data_or_null(db_hh);
        d.dgi = dgi.data(), d.dgh = dgh.data();
        GRULayerArgs fwd = a;  // the sizes, and acts, h_prev (this closure holds them)
        fwd.len = lengths.empty() ? nullptr : lengths.data();  // the closure's copy
        fwd.x = x.data(), fwd.w_ih = w_ih.data(), fwd.w_hh = w_hh.data();
        fwd.b_ih = fwd.b_hh = nullptr, fwd.out = fwd.h = nullptr;  // not read
        gru_layer_backward(fwd, d);
        const Tensor grads[] = {dx, dh, dw_ih, dw_hh, db_ih, db_hh};
        for (int i = 0; i < 6; ++i)
          if (g.needs(i)) g[i] = grads[i];
      });
  return {narrow(packed, 0, 0, BTH).reshape({B, T, H}), narrow(packed, 0, BTH, BH).reshape({B, H})};
}

Tensor gru_cell_reference(const Tensor& x, const Tensor& h, const Tensor& w_ih,
                          const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  const int64_t H = h.size(1);
  const Tensor gi = linear(x, w_ih, b_ih);  // (B, 3H) = x W_ih^T + b_ih
  const Tensor gh = linear(h, w_hh, b_hh);  // (B, 3H) = h W_hh^T + b_hh
  // r = sigmoid(gi_r + gh_r)    z = sigmoid(gi_z + gh_z)
  const Tensor r = sigmoid(narrow(gi, 1, 0, H) + narrow(gh, 1, 0, H));
  const Tensor z = sigmoid(narrow(gi, 1, H, H) + narrow(gh, 1, H, H));
  // n = tanh(gi_n + r * gh_n)
  const Tensor n = tanh(narrow(gi, 1, 2 * H, H) + r * narrow(gh, 1, 2 * H, H));
  // h' = (1 - z) * n + z * h  =  n + z * (h - n)
  return n + z * (h - n);
}

}  // namespace heed
