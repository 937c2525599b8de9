// recurrent_scan.cpp - the time loop of the recurrent layers (see recurrent_scan.h).
#include "recurrent_scan.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "../autograd/engine/node.h"
#include "../autograd/ops/attention/attention_mask.h"
#include "../autograd/ops/compare.h"
#include "../autograd/ops/dropout.h"
#include "../autograd/ops/shape.h"
#include "../core/error.h"
#include "init.h"
#include "repr.h"

namespace heed::nn::detail {

namespace {

// x (B, T, C) -> its first n time steps as n tensors (B, C), for the loop to read.
//
// A heed Node has one output, so the obvious way, narrow(x, 1, t, 1) per step, gives n
// nodes whose backwards each return a whole (B, T, C) gradient that is zero but for one
// step, and the engine sums them: O(T^2 B C) work, which dominates long sequences.
// Instead, one node `src` (x under another name) and, after it, one node per step. A
// step's backward adds its (B, C) gradient into a (B, T, C) buffer they share and returns
// none; src's backward hands the buffer on as dx. The engine runs src only after every
// consumer of src that the loss reaches has run, so by then the buffer is complete.
std::vector<Tensor> unbind_steps(const Tensor& x, int64_t n) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
  auto buf = std::make_shared<Tensor>();  // dL/dx, built up by the steps' backwards
  const Tensor src = record("unbind", x.detach(), {x}, [buf](const Tensor&, Grads& g) {
    g[0] = buf->defined() ? *buf : Tensor();  // undefined: no step reached the loss
    *buf = Tensor();                          // ready for another backward (retain_graph)
  });
  std::vector<Tensor> steps;
  for (int64_t t = 0; t < n; ++t) {
    Tensor x_t = empty({B, C});  // x_t[b, :] = x[b, t, :]
    for (int64_t b = 0; b < B; ++b)
      std::copy_n(x.data() + (b * T + t) * C, C, x_t.data() + b * C);
    steps.push_back(record("unbind", x_t, {src}, [buf, t, B, T, C](const Tensor& dy, Grads&) {
      if (!buf->defined()) *buf = zeros({B, T, C});
      for (int64_t b = 0; b < B; ++b) {  // buf[b, t, :] += dy[b, :]
        real* dst = buf->data() + (b * T + t) * C;
        const real* d = dy.data() + b * C;
        for (int64_t c = 0; c < C; ++c) dst[c] += d[c];
      }
    }));
  }
  return steps;
}

// x (B, T, In), s0 as in run_layers, lengths checked.
LayersOutput run_batch_first(const Tensor& x, const State& s0, const std::vector<int64_t>& lengths,
                             const ScanConfig& cfg, const DirectionFn& direction) {
  const int64_t B = x.size(0), H = cfg.hidden_size;
  const int dirs = cfg.bidirectional ? 2 : 1;
  std::vector<State> finals(s0.size());  // finals[i][l * dirs + d]: component i, (B, H)
  Tensor input = x;                      // (B, T, In) for layer 0, (B, T, dirs * H) after
  for (int64_t l = 0; l < cfg.num_layers; ++l) {
    std::vector<Tensor> outs;  // (B, T, H) per direction
    for (int d = 0; d < dirs; ++d) {
      const int64_t idx = l * dirs + d;
      State s(s0.size());
      for (size_t i = 0; i < s0.size(); ++i)
        s[i] = s0[i].defined() ? narrow(s0[i], 0, idx, 1).reshape({B, H}) : zeros({B, H});
      State last;
      outs.push_back(direction(l, d, input, s, lengths, last));
      for (size_t i = 0; i < s0.size(); ++i) finals[i].push_back(last[i]);
    }
    input = dirs == 1 ? outs[0] : cat(outs, 2);  // (B, T, dirs * H)
    if (l + 1 < cfg.num_layers) input = dropout(input, cfg.dropout, cfg.training);
  }
  LayersOutput r;
  r.output = input;
  for (auto& f : finals) r.last.push_back(stack(f, 0));  // (num_layers * dirs, B, H)
  return r;
}

void check_input(const char* op, const Tensor& x, const ScanConfig& cfg) {
  const char* layout = cfg.batch_first ? "(B, T, input_size)" : "(T, B, input_size)";
  HEED_CHECK(x.defined(), op, "input is undefined");
  HEED_CHECK(x.dim() == 3, op, "input must be 3-D ", layout, ", got shape ", x.shape());
  HEED_CHECK(x.size(2) == cfg.input_size, op, "input has ", x.size(2), " features (shape ",
             x.shape(), ") but input_size is ", cfg.input_size);
  HEED_CHECK(x.size(0) > 0 && x.size(1) > 0, op, "input of shape ", x.shape(), " is empty; ",
             "expected ", layout);
}

void check_lengths(const char* op, const std::vector<int64_t>& lengths, int64_t B, int64_t T) {
  if (lengths.empty()) return;
  HEED_CHECK(int64_t(lengths.size()) == B, op, "got ", lengths.size(), " lengths for a batch of ",
             B, " sequences");
  for (size_t b = 0; b < lengths.size(); ++b)
    HEED_CHECK(lengths[b] >= 1 && lengths[b] <= T, op, "lengths[", b, "] = ", lengths[b],
               " is outside [1, T] = [1, ", T, "]");
}

}  // namespace

Tensor scan(const Tensor& x, const State& s0, const std::vector<int64_t>& len, bool reverse,
            const CellFn& cell, State& last) {
  const int64_t T = x.size(1);
  const int64_t max_len = len.empty() ? T : *std::max_element(len.begin(), len.end());
  const std::vector<Tensor> xs = unbind_steps(x, max_len);  // (B, C) per step
  State s = s0;
  const int64_t B = s[0].size(0), H = s[0].size(1);
  std::vector<Tensor> out(T);  // (B, H) each
  std::vector<real> valid(B), padded(B);
  for (int64_t k = 0; k < T; ++k) {
    const int64_t t = reverse ? T - 1 - k : k;  // the reverse direction walks back in time
    if (t >= max_len) {  // every row is padding here: no step, no graph
      out[t] = zeros({B, H});
      continue;
    }
    int64_t n_valid = 0;
    for (int64_t b = 0; b < B; ++b) {
      valid[b] = len.empty() || t < len[b] ? 1 : 0;
      padded[b] = 1 - valid[b];
      n_valid += int64_t(valid[b]);
    }
    State s1 = cell(xs[t], s);
    if (n_valid == B) {  // no padding at this step
      s = s1;
      out[t] = s1[0];
      continue;
    }
    // s = where(t < len_b, s', s);   out_t = where(t < len_b, h', 0)
    const Tensor m = from_vector(valid, {B, 1}), pad = from_vector(padded, {B, 1});
    out[t] = masked_fill(s1[0], pad, 0);
    for (size_t i = 0; i < s.size(); ++i) s[i] = where(m, s1[i], s[i]);
  }
  last = s;
  return stack(out, 1);  // (B, T, H)
}

LayersOutput run_layers(const char* op, const Tensor& x_in, const State& s0,
                        const std::vector<const char*>& s0_names,
                        const std::vector<int64_t>& lengths, const ScanConfig& cfg,
                        const DirectionFn& direction) {
  check_input(op, x_in, cfg);
  const Tensor x = cfg.batch_first ? x_in : transpose(x_in, 0, 1);  // (B, T, In)
  const int64_t B = x.size(0), T = x.size(1), H = cfg.hidden_size;
  check_lengths(op, lengths, B, T);
  const Shape want = {cfg.num_layers * (cfg.bidirectional ? 2 : 1), B, H};
  for (size_t i = 0; i < s0.size(); ++i) {
    HEED_CHECK(s0[i].defined() == s0[0].defined(), op, "give all of the initial state (",
               s0_names[0], s0.size() > 1 ? ", " : "", s0.size() > 1 ? s0_names[1] : "",
               ") or none of it");
    HEED_CHECK(!s0[i].defined() || s0[i].shape() == want, op, s0_names[i], " must be (num_layers"
               " * num_directions, B, hidden_size) = ", want, ", got ", s0[i].shape());
  }
  LayersOutput r = run_batch_first(x, s0, lengths, cfg, direction);
  if (!cfg.batch_first) r.output = transpose(r.output, 0, 1);
  return r;
}

std::vector<int64_t> lengths_from_mask(const char* op, const Tensor& mask, const Tensor& x,
                                       const ScanConfig& cfg) {
  check_input(op, x, cfg);
  const int64_t B = x.size(cfg.batch_first ? 0 : 1), T = x.size(cfg.batch_first ? 1 : 0);
  HEED_CHECK(mask.defined() && mask.shape() == Shape({B, T}), op, "padding mask must be (B, T) = ",
             Shape({B, T}), ", got ", mask.defined() ? mask.shape() : Shape());
  check_mask_values(op, "padding mask", mask);  // exactly 0/1, as every mask in heed
  std::vector<int64_t> lengths(B);
  const real* m = mask.data();
  for (int64_t b = 0; b < B; ++b) {
    int64_t n = 0;
    while (n < T && m[b * T + n] != 0) ++n;
    for (int64_t t = n; t < T; ++t)
      HEED_CHECK(m[b * T + t] == 0, op, "padding mask row ", b, " has a valid step at t = ", t,
                 " after padding at t = ", n, "; only right padding is supported");
    HEED_CHECK(n >= 1, op, "padding mask row ", b, " has no valid step");
    lengths[b] = n;
  }
  return lengths;
}

std::string repr_args(const ScanConfig& cfg, bool bias) {
  std::string s = "(" + std::to_string(cfg.input_size) + ", " + std::to_string(cfg.hidden_size);
  if (cfg.num_layers != 1) s += ", num_layers=" + std::to_string(cfg.num_layers);
  if (!bias) s += ", bias=False";
  if (cfg.batch_first) s += ", batch_first=True";
  if (cfg.dropout != 0) s += ", dropout=" + py_float(cfg.dropout);
  if (cfg.bidirectional) s += ", bidirectional=True";
  return s + ")";
}

}  // namespace heed::nn::detail
