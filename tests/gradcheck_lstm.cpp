// gradcheck_lstm.cpp - finite-difference checks (double build) of the fused LSTM cell op,
// its composed reference, nn::LSTM (2 layers, bidirectional, padded batch) and nn::GRU.
#include <heed/core/random.h>
#include <heed/autograd/ops/lstm_cell.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/gru.h>
#include <heed/layers/lstm.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

// (h', c') as one tensor, so gradcheck sees both outputs.
Tensor both(const std::tuple<Tensor, Tensor>& hc) {
  return cat({std::get<0>(hc), std::get<1>(hc)}, 1);
}

// output, h_n and c_n of an LSTM as one flat tensor.
Tensor flat(const nn::LSTMOutput& r) {
  return cat({flatten(r.output), flatten(r.h_n), flatten(r.c_n)}, 0);
}

}  // namespace

TEST_CASE("gradcheck lstm_cell (fused) wrt x, h, c and all weights, with and without bias") {
  manual_seed(11);
  const int64_t B = 3, In = 4, H = 2;
  Tensor x = param({B, In}), h = param({B, H}), c = param({B, H});
  Tensor w_ih = param({4 * H, In}, 0.5), w_hh = param({4 * H, H}, 0.5);
  Tensor b_ih = param({4 * H}), b_hh = param({4 * H});
  const V all = {x, h, c, w_ih, w_hh, b_ih, b_hh};
  check_grad([](const V& v) { return lstm_cell_packed(v[0], v[1], v[2], v[3], v[4], v[5], v[6]); },
             all);
  check_grad([](const V& v) { return both(lstm_cell(v[0], v[1], v[2], v[3], v[4], v[5], v[6])); },
             all);
  check_grad([](const V& v) { return both(lstm_cell(v[0], v[1], v[2], v[3], v[4])); },
             {x, h, c, w_ih, w_hh});
  // only h' used downstream (c' gets a zero gradient), and only c'
  check_grad([](const V& v) { return std::get<0>(lstm_cell(v[0], v[1], v[2], v[3], v[4], v[5], v[6])); },
             all);
  check_grad([](const V& v) { return std::get<1>(lstm_cell(v[0], v[1], v[2], v[3], v[4], v[5], v[6])); },
             all);
}

TEST_CASE("gradcheck lstm_cell_reference (the composed twin)") {
  manual_seed(12);
  const int64_t B = 2, In = 3, H = 2;
  Tensor x = param({B, In}), h = param({B, H}), c = param({B, H});
  Tensor w_ih = param({4 * H, In}, 0.5), w_hh = param({4 * H, H}, 0.5);
  Tensor b_ih = param({4 * H}), b_hh = param({4 * H});
  check_grad(
      [](const V& v) { return both(lstm_cell_reference(v[0], v[1], v[2], v[3], v[4], v[5], v[6])); },
      {x, h, c, w_ih, w_hh, b_ih, b_hh});
}

TEST_CASE("gradcheck LSTM: 2 layers, bidirectional, padded batch (lengths 3, 1, 2)") {
  manual_seed(13);
  const int64_t B = 3, T = 3, In = 2, H = 2;
  auto lstm = nn::LSTM(
      nn::LSTMOptions(In, H).num_layers(2).bidirectional(true));
  Tensor x = param({B, T, In});
  Tensor h0 = param({4, B, H}, 0.5), c0 = param({4, B, H}, 0.5);
  const std::vector<int64_t> lengths = {3, 1, 2};
  // gradcheck perturbs the tensors it is given in place; f reads them all by capture
  auto f = [&](const V&) { return flat(lstm->forward(x, std::make_tuple(h0, c0), lengths)); };
  check_grad(f, {x, h0, c0});
  // a few parameters of each layer and direction
  check_grad(f, {lstm->weight_ih[0], lstm->weight_hh[1], lstm->bias_ih[2], lstm->bias_hh[3]});
  check_grad(f, {lstm->weight_ih[3], lstm->weight_hh[2], lstm->bias_hh[0]});
  // without an initial state, and unpadded
  check_grad([&](const V&) { return flat(lstm->forward(x)); }, {x, lstm->weight_ih[2]});
}

TEST_CASE("gradcheck LSTM: batch_first(false), one layer, no bias") {
  manual_seed(14);
  auto lstm = nn::LSTM(nn::LSTMOptions(3, 2).batch_first(false).bias(false));
  Tensor x = param({4, 2, 3});  // (T, B, In)
  check_grad([&](const V&) { return flat(lstm->forward(x, {}, std::vector<int64_t>{4, 2})); },
             {x, lstm->weight_ih[0], lstm->weight_hh[0]});
}

TEST_CASE("gradcheck GRU cell and GRU: 2 layers, bidirectional, padded batch") {
  manual_seed(15);
  const int64_t B = 3, T = 3, In = 2, H = 2;
  auto cell = nn::GRUCell(nn::GRUCellOptions(In, H));
  Tensor xc = param({B, In}), hc = param({B, H});
  check_grad([&](const V&) { return cell->forward(xc, hc); },
             {xc, hc, cell->weight_ih, cell->weight_hh, cell->bias_ih, cell->bias_hh});

  auto gru = nn::GRU(nn::GRUOptions(In, H).num_layers(2).bidirectional(true));
  Tensor x = param({B, T, In}), h0 = param({4, B, H}, 0.5);
  const std::vector<int64_t> lengths = {3, 1, 2};
  auto f = [&](const V&) {
    nn::GRUOutput r = gru->forward(x, h0, lengths);
    return cat({flatten(r.output), flatten(r.h_n)}, 0);
  };
  check_grad(f, {x, h0});
  check_grad(f, {gru->weight_ih[0], gru->weight_hh[1], gru->bias_ih[2], gru->bias_hh[3]});
}
