// test_golden_lstm.cpp - heed's LSTMCell, LSTM, GRUCell and GRU against PyTorch's
// (tests/golden/lstm.bin, made by tests/golden/gen_lstm.py, which shows the torch calls).
//
// Each case stores the inputs (x, h0, c0), for padded cases the lengths given to
// pack_padded_sequence, every parameter under its PyTorch name, torch's float64 outputs,
// an upstream gradient dy_<output> per output, and the gradients of every input and
// parameter. The test copies the parameters into the heed module by name, runs forward
// and backward in float32, and compares all of it (rtol 1e-5, atol 1e-6 x scale: the rule
// of tests/golden/golden.h). Every array of a case must be looked at.
#include <algorithm>
#include <functional>

#include <heed/autograd/ops/arith.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/layers/gru.h>
#include <heed/layers/lstm.h>
#include <heed/layers/module.h>
#include "golden/golden.h"
#include "helpers.h"

using namespace heed;

namespace {

const golden::File& lstm_file() {
  static const golden::File f("tests/golden/lstm.bin");
  return f;
}

using Forward = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs,
                                                  const std::vector<int64_t>& lengths)>;

void expect(const golden::Check& c) { CHECK_MESSAGE(c.ok, c.message); }

// Load case `c` into module m, run fwd on the inputs, backprop sum_k(out_k * dy_k) and
// compare the outputs, the inputs' gradients and every parameter's gradient with torch's.
void check_case(const std::string& c, nn::Module& m, const std::vector<std::string>& inputs,
                const std::vector<std::string>& outputs, const Forward& fwd) {
  const golden::File& f = lstm_file();
  std::vector<std::string> seen;
  {
    NoGradGuard ng;
    for (auto& [name, p] : m.named_parameters()) {
      REQUIRE_MESSAGE(f.has(c, name), c, " has no parameter ", name);
      REQUIRE(f.array(c, name).shape == p.shape());
      p.copy_(f.tensor(c, name));
      seen.push_back(name);
    }
  }
  std::vector<Tensor> xs;
  for (const std::string& n : inputs) {
    xs.push_back(f.tensor(c, n).requires_grad_());
    seen.push_back(n);
  }
  std::vector<int64_t> lengths;
  if (f.has(c, "lengths")) {
    for (double v : f.array(c, "lengths").data) lengths.push_back(int64_t(v));
    seen.push_back("lengths");
  }

  const std::vector<Tensor> outs = fwd(xs, lengths);
  REQUIRE(outs.size() == outputs.size());
  Tensor loss = scalar_tensor(0);
  for (size_t k = 0; k < outs.size(); ++k) {
    expect(golden::compare(outs[k], f.array(c, outputs[k]), c + " " + outputs[k]));
    REQUIRE(outs[k].shape() == f.array(c, outputs[k]).shape);
    loss = loss + sum(outs[k] * f.tensor(c, "dy_" + outputs[k]));
    seen.push_back(outputs[k]);
    seen.push_back("dy_" + outputs[k]);
  }
  m.zero_grad();
  loss.backward();
  for (size_t i = 0; i < xs.size(); ++i) {
    expect(golden::compare(xs[i].grad(), f.array(c, "grad_" + inputs[i]), c + " grad_" + inputs[i]));
    seen.push_back("grad_" + inputs[i]);
  }
  for (auto& [name, p] : m.named_parameters()) {
    const Tensor g = p.grad().defined() ? p.grad() : zeros_like(p);
    expect(golden::compare(g, f.array(c, "grad_" + name), c + " grad of " + name));
    seen.push_back("grad_" + name);
  }
  for (const std::string& a : f.arrays(c))
    CHECK_MESSAGE(std::find(seen.begin(), seen.end(), a) != seen.end(), c, " array ", a, " unchecked");
}

std::vector<Tensor> lstm_outputs(const nn::LSTMOutput& r) { return {r.output, r.h_n, r.c_n}; }

}  // namespace

TEST_CASE("golden lstm: LSTMCell(4, 3), a seq2seq decoder step") {
  nn::LSTMCell cell(4, 3);
  check_case("lstm_cell", *cell, {"x", "h0", "c0"}, {"h", "c"},
             [&](const std::vector<Tensor>& in, const std::vector<int64_t>&) {
               auto [h, c] = cell->forward(in[0], std::make_tuple(in[1], in[2]));
               return std::vector<Tensor>{h, c};
             });
}

TEST_CASE("golden lstm: LSTM(3, 4, num_layers=2, bidirectional, batch_first), full and padded") {
  for (const char* c : {"lstm_2layer_bidir", "lstm_2layer_bidir_packed"}) {
    CAPTURE(c);
    nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
    check_case(c, *lstm, {"x", "h0", "c0"}, {"output", "h_n", "c_n"},
               [&](const std::vector<Tensor>& in, const std::vector<int64_t>& lengths) {
                 return lstm_outputs(lstm->forward(in[0], std::make_tuple(in[1], in[2]), lengths));
               });
  }
}

TEST_CASE("golden lstm: LSTM(3, 2, bias=False), sequence-first, padded") {
  nn::LSTM lstm(nn::LSTMOptions(3, 2).bias(false).batch_first(false));
  check_case("lstm_nobias_seqfirst_packed", *lstm, {"x", "h0", "c0"}, {"output", "h_n", "c_n"},
             [&](const std::vector<Tensor>& in, const std::vector<int64_t>& lengths) {
               return lstm_outputs(lstm->forward(in[0], std::make_tuple(in[1], in[2]), lengths));
             });
}

TEST_CASE("golden lstm: GRUCell(4, 3) and GRU(3, 4, 2 layers, bidirectional) padded") {
  nn::GRUCell cell(4, 3);
  check_case("gru_cell", *cell, {"x", "h0"}, {"h"},
             [&](const std::vector<Tensor>& in, const std::vector<int64_t>&) {
               return std::vector<Tensor>{cell->forward(in[0], in[1])};
             });
  nn::GRU gru(nn::GRUOptions(3, 4).num_layers(2).bidirectional(true));
  check_case("gru_2layer_bidir_packed", *gru, {"x", "h0"}, {"output", "h_n"},
             [&](const std::vector<Tensor>& in, const std::vector<int64_t>& lengths) {
               nn::GRUOutput r = gru->forward(in[0], in[1], lengths);
               return std::vector<Tensor>{r.output, r.h_n};
             });
}
