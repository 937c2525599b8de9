// layer_steps.h - internal: what the fused recurrent layers (lstm_layer.cpp,
// gru_layer.cpp) share: their argument checks, the time bookkeeping and the one time loop
// their forward and backward kernels run. Row b of a padded batch has len[b] valid steps (len
// null: every row is T long); the reverse direction walks t = T-1 .. 0.
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "../../core/blas.h"
#include "../../core/error.h"
#include "../../core/packed_gemm.h"
#include "../../core/parallel.h"
#include "../../core/tensor.h"
#include "recurrent_args.h"
#include "reduce_util.h"

namespace heed::detail {

// heed::Error naming `op` unless x is (B, T, In), w_hh (gates*H, H), w_ih (gates*H, In), each
// state (B, H), each bias (gates*H) or undefined, and lengths empty or B values in [1, T].
inline void check_layer_args(const char* op, int64_t gates, const Tensor& x,
                             const std::vector<Tensor>& states, const RecurrentWeights& w,
                             const std::vector<int64_t>& lengths) {
  const Tensor &w_ih = w.w_ih, &w_hh = w.w_hh;
  const auto shape = [](const Tensor& t) { return t.defined() ? t.shape() : Shape(); };
  HEED_CHECK(x.defined() && x.dim() == 3, op, "x must be (B, T, In), got ", shape(x));
  HEED_CHECK(w_hh.defined() && w_hh.dim() == 2 && w_hh.size(0) == gates * w_hh.size(1), op,
             "w_hh must be (", gates, "H, H), got ", shape(w_hh));
  const int64_t B = x.size(0), T = x.size(1), In = x.size(2), H = w_hh.size(1), G = gates * H;
  HEED_CHECK(w_ih.defined() && w_ih.shape() == Shape({G, In}), op, "w_ih must be (", gates,
             "H, In) = ", Shape({G, In}), ", got ", shape(w_ih));
  for (const Tensor& s : states)
    HEED_CHECK(s.defined() && s.shape() == Shape({B, H}), op, "the initial state must be (B, H) = ",
               Shape({B, H}), ", got ", shape(s));
  for (const Tensor* b : {&w.b_ih, &w.b_hh})
    HEED_CHECK(!b->defined() || b->shape() == Shape({G}), op, "biases must be (", gates,
               "H) = (", G, "), got ", b->shape());
  HEED_CHECK(lengths.empty() || int64_t(lengths.size()) == B, op, "got ", lengths.size(),
             " lengths for a batch of ", B);
  for (int64_t n : lengths)
    HEED_CHECK(n >= 1 && n <= T, op, "length ", n, " is outside [1, T] = [1, ", T, "]");
}

// The step of the k-th iteration: t = k forward, T-1-k reversed.
inline int64_t step_at(int64_t k, int64_t T, bool reverse) { return reverse ? T - 1 - k : k; }

// Whether row b has a valid step t; every row does when len is null.
inline bool step_valid(const int64_t* len, int64_t b, int64_t t) { return !len || t < len[b]; }

// The longest row: steps t >= it are padding in every row.
inline int64_t longest(const int64_t* len, int64_t B, int64_t T) {
  return len ? *std::max_element(len, len + B) : T;
}

// The threads a fused layer's recurrence runs on (core/parallel.h, run_team): each owns whole
// panels of kPanel hidden units (core/packed_gemm.h), and a step's product, (B, H) @
// (H, gates*H), must hold the work a second thread pays for (as gemm(): M*N*K > 262144).
inline int recurrence_threads(int64_t B, int64_t G, int64_t H) {
  const int64_t panels = (H + kPanel - 1) / kPanel;
  if (B * G * H <= 262144) return 1;
  return int(std::min<int64_t>(threads_now(), panels));
}

// The hidden units [begin, end) that thread `rank` of `size` owns: whole panels, split evenly.
inline std::pair<int64_t, int64_t> units_of(int rank, int size, int64_t H) {
  const int64_t panels = (H + kPanel - 1) / kPanel;
  const int64_t p0 = panels * rank / size, p1 = panels * (rank + 1) / size;
  return {std::min(H, p0 * kPanel), std::min(H, p1 * kPanel)};
}

// The forward's recurrent weights for one thread: gate q's block holds the columns
// q*H + j0 .. q*H + j0 + n of W_hh^T, (H, n), packed once for the whole sequence.
inline std::vector<PackedB> pack_gate_columns(const real* w_hh, int gates, int64_t H, int64_t j0,
                                              int64_t n) {
  std::vector<PackedB> w(gates);
  for (int q = 0; q < gates; ++q) w[q] = pack_b(w_hh + (q * H + j0) * H, true, H, H, n);
  return w;
}

// A fused layer's sizes and inputs: x (B, T, In), w (H = w_hh's columns), lengths (empty: every
// row T long), the direction. The op then points out, h and its own buffers.
inline void set_layer_inputs(LayerArgs& a, const Tensor& x, const RecurrentWeights& w,
                             const std::vector<int64_t>& lengths, bool reverse) {
  a.B = x.size(0), a.T = x.size(1), a.In = x.size(2), a.H = w.w_hh.size(1);
  a.len = lengths.empty() ? nullptr : lengths.data();
  a.reverse = reverse;
  a.x = x.data(), a.w_ih = w.w_ih.data(), a.w_hh = w.w_hh.data();
  a.b_ih = data_or_null(w.b_ih), a.b_hh = data_or_null(w.b_hh);
}

// The hidden units [j0, j0 + n) that one thread of a recurrence owns.
struct Units {
  int64_t j0 = 0, n = 0;
};

enum class Walk { forward, backward };  // the forward pass's time order, or that reversed

// The time loop of a fused recurrent layer, written once for the LSTM and GRU kernels, forward
// and backward: one parallel region (core/parallel.h, run_team) for the whole sequence, whose
// thread p owns the hidden units `u` = units_of(p) and a `Local` of its own (its packed weights,
// its scratch), and whose threads meet inside `step` wherever a step's product needs every unit.
//
//   prepare(local, u)            once per thread, inside Team::prepare: it may allocate and throw
//   for k in 0 .. T-1            t = step_at(k) walking forward, step_at(T-1-k) walking backward
//     padding(u, t)              when every row is padding at t (t >= the longest length)
//     step(local, u, t, team)    otherwise
//
// The three are lambdas the compiler inlines: no allocation and no indirect call per step.
template <class Local, class Prepare, class Padding, class Step>
void recurrence(const LayerSizes& s, int gates, Walk walk, const Prepare& prepare,
                const Padding& padding, const Step& step) {
  const int nt = recurrence_threads(s.B, gates * s.H, s.H);
  const int64_t max_len = longest(s.len, s.B, s.T);
  std::vector<Local> locals(nt);  // one a thread (team.size <= nt), allocated before the region
  run_team(nt, [&](const Team& team) {
    const std::pair<int64_t, int64_t> units = units_of(team.rank, team.size, s.H);
    const Units u{units.first, units.second - units.first};
    Local& local = locals[team.rank];
    if (!team.prepare([&] { prepare(local, u); })) return;
    for (int64_t k = 0; k < s.T; ++k) {
      const int64_t t = step_at(walk == Walk::forward ? k : s.T - 1 - k, s.T, s.reverse);
      if (t >= max_len)
        padding(u, t);
      else
        step(local, u, t, team);
    }
  });
}

// A forward step's rows, units u: at a valid step cell(b) advances row b's state h (B, H) in
// place and out_t = h'; a padded row keeps its state and outputs 0.
template <class Cell>
void forward_rows(const LayerSizes& s, Units u, int64_t t, real* out, const real* h,
                  const Cell& cell) {
  for (int64_t b = 0; b < s.B; ++b) {
    real* o = out + (b * s.T + t) * s.H + u.j0;
    if (!step_valid(s.len, b, t)) {  // padded: state kept, output 0
      std::fill_n(o, u.n, real(0));
      continue;
    }
    cell(b);
    std::copy_n(h + b * s.H + u.j0, u.n, o);  // out_t = h'
  }
}

}  // namespace heed::detail
