// recurrent_scan.h - internal: the time loop shared by nn::LSTM and nn::GRU. Not public API.
//
// A recurrent layer is a cell applied along time; everything else is bookkeeping that
// LSTM and GRU share, written once here:
//   scan        one direction of one layer over a padded batch, one recorded cell per step:
//               the composed reference for the fused layers nn::LSTM and nn::GRU run
//               (autograd/ops/lstm_layer.h, autograd/ops/gru_layer.h: a whole direction in
//               one op), used by their tests
//   run_layers  num_layers of a direction, each bidirectional or not, dropout in between
//   checks      input rank and width, lengths, initial-state shapes, a padding mask
//   init, repr  PyTorch's initialisation and printout of the options
//
// Variable lengths (what pack_padded_sequence gives in PyTorch): row b has len_b valid
// steps, 1 <= len_b <= T, followed by padding. At a padded step t >= len_b the row's
// state is left as it was and its output is 0, blended per step as
//     s = where(t < len_b, s', s)        out_t = where(t < len_b, h', 0)
// so a padded step neither changes the state nor sends gradient into the cell. The
// forward direction therefore ends each row at its own last valid step; the reverse
// direction, walking t = T-1 .. 0, starts each row there (t = len_b - 1) from its initial
// state. Steps where every row is padded are skipped outright.
//
// Shapes: x (B, T, In), states (B, H) each, h0/h_n-style stacks (num_layers * dirs, B, H).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "../core/tensor.h"
#include "recurrent_base.h"

namespace heed::nn::detail {

using State = std::vector<Tensor>;  // {h, c} for an LSTM, {h} for a GRU; each (B, H)

// One step of one cell: x_t (B, C), state -> the next state.
using CellFn = std::function<State(const Tensor& x_t, const State& s)>;

// One direction of one layer: layer l (0-based), direction d (0 forward, 1 reverse),
// x (B, T, In_l), s0 each (B, H), len as run_layers' (checked). Returns out (B, T, H), 0 at
// padded steps, and in `last` the state after each row's last valid step.
using DirectionFn = std::function<Tensor(int64_t l, int d, const Tensor& x, const State& s0,
                                         const std::vector<int64_t>& len, State& last)>;

// A DirectionFn's work done one recorded cell step at a time: x (B, T, C) is cut into steps
// (one node each, sharing one gradient buffer), `cell` runs on each valid step in time order
// (reversed when `reverse`), and padded steps are blended as described above.
Tensor scan(const Tensor& x, const State& s0, const std::vector<int64_t>& len, bool reverse,
            const CellFn& cell, State& last);

struct ScanConfig {
  int64_t input_size = 0, hidden_size = 0, num_layers = 1;
  bool bidirectional = false;
  bool batch_first = true;  // false: x and output are (T, B, .)
  double dropout = 0;       // on every layer's output but the last
  bool training = false;    // dropout is applied only when training
};

// The ScanConfig of a layer's options (LSTMOptions, GRUOptions).
template <class Self>
ScanConfig scan_config(const RecurrentOptions<Self>& o, bool training) {
  ScanConfig cfg;
  cfg.input_size = o.input_size();
  cfg.hidden_size = o.hidden_size();
  cfg.num_layers = o.num_layers();
  cfg.bidirectional = o.bidirectional();
  cfg.batch_first = o.batch_first();
  cfg.dropout = o.dropout();
  cfg.training = training;
  return cfg;
}

struct LayersOutput {
  Tensor output;  // (B, T, dirs * H): the last layer's h at every step, 0 at padded steps
  State last;     // each (num_layers * dirs, B, H): the state after each row's last valid step
};

// The whole forward of a recurrent layer, named `op` in errors:
//   x       (B, T, In), or (T, B, In) when !cfg.batch_first
//   s0      one (num_layers * dirs, B, H) tensor per state component (named by s0_names
//           in errors), or undefined for zeros; all defined or all undefined
//   lengths one per row in [1, T], or empty: every row is T long
LayersOutput run_layers(const char* op, const Tensor& x, const State& s0,
                        const std::vector<const char*>& s0_names,
                        const std::vector<int64_t>& lengths, const ScanConfig& cfg,
                        const DirectionFn& direction);

// A (B, T) padding mask, 1 at valid steps and 0 at padding (any other value, NaN included,
// is a heed::Error, as for attention masks), as lengths. Each row must be valid
// steps followed only by padding (right padding), with at least one valid step. x is
// the layer's input, to read B and T from.
std::vector<int64_t> lengths_from_mask(const char* op, const Tensor& mask, const Tensor& x,
                                       const ScanConfig& cfg);

// ---- printing ----

// Options that differ from PyTorch's defaults, as RNNBase.extra_repr prints them:
// "(4, 8, num_layers=2, batch_first=True, bidirectional=True)".
std::string repr_args(const ScanConfig& cfg, bool bias);

}  // namespace heed::nn::detail
