// lstm_gates.h - internal: the elementwise half of one LSTM step for one batch row, forward
// and backward, shared by the fused cell (lstm_cell.cpp) and the fused layer
// (lstm_layer.cpp). The matrix half (gates = x W_ih^T + h W_hh^T + biases) is the caller's.
//
//   a = [i | f | g | o] pre-activations, each (H)       (activated in place by the forward)
//   2. i = sigmoid(a_i)   f = sigmoid(a_f)   g = tanh(a_g)   o = sigmoid(a_o)
//   3. c' = f * c + i * g
//   4. h' = o * tanh(c')
// One short loop per result, so that each vectorises (fastmath:: sigmoid and tanh; GCC gives
// up on a loop that reads and writes one array at several offsets), compiled at every CPU
// level and run at the one in use (run_at_cpu_level, core/cpu.h).
#pragma once
#include <cstdint>

#include "../../core/cpu.h"
#include "../../core/fastmath.h"
#include "../../core/real.h"

namespace heed::detail {

// a (4H) += b_ih + b_hh, either may be null (no bias).
inline void lstm_gates_add_bias(real* a, const real* b_ih, const real* b_hh, int64_t H) {
  if (b_ih)
    for (int64_t k = 0; k < 4 * H; ++k) a[k] += b_ih[k];
  if (b_hh)
    for (int64_t k = 0; k < 4 * H; ++k) a[k] += b_hh[k];
}

// The step for n hidden units: the gate values of unit j are a[j], a[H + j], a[2H + j] and
// a[3H + j] (H, the gate stride, is the layer's hidden size; a fused layer's thread passes its
// own units, a pointer to the first and n < H). c, c1 and h1 hold the n units.
//
// a: pre-activations in, activations out.  c in, c1 and h1 out; c1 may be c.
inline void lstm_gates_forward(real* a, int64_t H, const real* c, real* c1, real* h1, int64_t n) {
  run_at_cpu_level([&] {  // the loops at the CPU's vector width (core/cpu.h)
    real *i = a, *f = a + H, *g = a + 2 * H, *o = a + 3 * H;
    // 2. i = sigmoid(a_i), f = sigmoid(a_f), g = tanh(a_g), o = sigmoid(a_o)
    for (int64_t j = 0; j < n; ++j) i[j] = fastmath::sigmoid(i[j]);
    for (int64_t j = 0; j < n; ++j) f[j] = fastmath::sigmoid(f[j]);
    for (int64_t j = 0; j < n; ++j) g[j] = fastmath::tanh(g[j]);
    for (int64_t j = 0; j < n; ++j) o[j] = fastmath::sigmoid(o[j]);
    // 3. c' = f * c + i * g
    for (int64_t j = 0; j < n; ++j) c1[j] = f[j] * c[j] + i[j] * g[j];
    // 4. h' = o * tanh(c')
    for (int64_t j = 0; j < n; ++j) h1[j] = o[j] * fastmath::tanh(c1[j]);
  });
}

// The backward's gradients for n units: dh1 and dc1 the upstream gradients in; da (gate
// stride H, as a) the gradient of the pre-activations out, and dc unless null; dc may be dc1.
struct LSTMGateGrads {
  const real* dh1;
  const real* dc1;
  real* da;
  real* dc;
};

// a activations, c and c1 as in the forward.
inline void lstm_gates_backward(const real* a, int64_t H, const real* c, const real* c1,
                                const LSTMGateGrads& d, int64_t n) {
  const real *dh1 = d.dh1, *dc1 = d.dc1;
  real *da = d.da, *dc = d.dc;
  run_at_cpu_level([&] {  // the loops at the CPU's vector width (core/cpu.h)
    const real *i = a, *f = a + H, *g = a + 2 * H, *o = a + 3 * H;
    real *di = da, *df = da + H, *dg = da + 2 * H, *d_o = da + 3 * H;  // [di | df | dg | do]
    // 4. h' = o * tanh(c')       do = dh' * tanh(c')    dc' += dh' * o * (1 - tanh(c')^2)
    //    o = sigmoid(.):         d(.) = do * o * (1 - o)
    //    (the whole dc' is parked in dg until step 3 has used it)
    for (int64_t j = 0; j < n; ++j) {
      const real tc = fastmath::tanh(c1[j]);
      d_o[j] = dh1[j] * tc * o[j] * (1 - o[j]);
      dg[j] = dc1[j] + dh1[j] * o[j] * (1 - tc * tc);
    }
    // 3. c' = f * c + i * g      dc = dc' * f   df = dc' * c   di = dc' * g   dg = dc' * i
    // 2. i, f = sigmoid(.): d(.) = di * i * (1 - i);  g = tanh(.): d(.) = dg * (1 - g^2)
    if (dc)
      for (int64_t j = 0; j < n; ++j) dc[j] = dg[j] * f[j];
    for (int64_t j = 0; j < n; ++j) di[j] = dg[j] * g[j] * i[j] * (1 - i[j]);
    for (int64_t j = 0; j < n; ++j) df[j] = dg[j] * c[j] * f[j] * (1 - f[j]);
    for (int64_t j = 0; j < n; ++j) dg[j] = dg[j] * i[j] * (1 - g[j] * g[j]);
  });
}

}  // namespace heed::detail
