// test_lstm.cpp - the fused LSTM cell against its composed twin, nn::LSTM's parameter
// names, padding semantics (as pack_padded_sequence), options and errors; nn::GRU's too.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/lstm_cell.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/gru.h>
#include <heed/layers/lstm.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;
using heed::test::param;

namespace {

// Row b of x (B, T, C), first n steps: (1, n, C).
Tensor row(const Tensor& x, int64_t b, int64_t n) { return narrow(narrow(x, 0, b, 1), 1, 0, n); }

std::vector<Tensor> grads_of(const std::vector<Tensor>& ts) {
  std::vector<Tensor> g;
  for (const Tensor& t : ts) g.push_back(t.grad().defined() ? t.grad() : zeros_like(t));
  return g;
}

void clear_grads(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) t.set_grad(Tensor());
}

}  // namespace

TEST_CASE("lstm_cell (fused) == lstm_cell_reference: outputs and every gradient") {
  manual_seed(21);
  const int64_t B = 5, In = 7, H = 6;
  Tensor x = param({B, In}), h = param({B, H}), c = param({B, H});
  Tensor w_ih = param({4 * H, In}, 0.4), w_hh = param({4 * H, H}, 0.4);
  Tensor b_ih = param({4 * H}), b_hh = param({4 * H});
  const Tensor dh = randn({B, H}), dc = randn({B, H});
  for (bool bias : {true, false}) {
    CAPTURE(bias);
    const std::vector<Tensor> leaves = {x, h, c, w_ih, w_hh, b_ih, b_hh};
    const Tensor bi = bias ? b_ih : Tensor(), bh = bias ? b_hh : Tensor();
    auto run = [&](auto cell) {
      clear_grads(leaves);
      auto [h1, c1] = cell(x, h, c, w_ih, w_hh, bi, bh);
      sum(h1 * dh + c1 * dc).backward();
      std::vector<Tensor> r = {h1.detach(), c1.detach()};
      for (const Tensor& g : grads_of(leaves)) r.push_back(g);
      return r;
    };
    const auto fused = run([](auto&&... a) { return lstm_cell(a...); });
    const auto ref = run([](auto&&... a) { return lstm_cell_reference(a...); });
    const char* names[] = {"h'", "c'", "dx", "dh", "dc", "dw_ih", "dw_hh", "db_ih", "db_hh"};
    for (size_t i = 0; i < fused.size(); ++i) {
      CAPTURE(names[i]);
      CHECK(allclose(fused[i], ref[i], 1e-5, 1e-6));
    }
  }
}

TEST_CASE("lstm_cell: shape errors name the op and the shapes") {
  Tensor x = zeros({2, 3}), h = zeros({2, 4}), c = zeros({2, 4});
  Tensor w_ih = zeros({16, 3}), w_hh = zeros({16, 4});
  CHECK_NOTHROW(lstm_cell(x, h, c, w_ih, w_hh));
  CHECK_THROWS_WITH_AS(lstm_cell(zeros({2, 5}), h, c, w_ih, w_hh), doctest::Contains("lstm_cell"), Error);
  CHECK_THROWS_AS(lstm_cell(zeros({2, 1, 3}), h, c, w_ih, w_hh), Error);
  CHECK_THROWS_AS(lstm_cell(x, zeros({3, 4}), c, w_ih, w_hh), Error);
  CHECK_THROWS_AS(lstm_cell(x, h, zeros({2, 5}), w_ih, w_hh), Error);
  CHECK_THROWS_AS(lstm_cell(x, h, c, w_ih, zeros({12, 4})), Error);
  CHECK_THROWS_AS(lstm_cell(x, h, c, w_ih, w_hh, zeros({15})), Error);
}

TEST_CASE("LSTM parameter names and shapes are PyTorch's (2 layers, bidirectional)") {
  nn::LSTM lstm(nn::LSTMOptions(5, 3).num_layers(2).bidirectional(true));
  const std::vector<std::pair<std::string, Shape>> want = {
      {"weight_ih_l0", {12, 5}},         {"weight_hh_l0", {12, 3}},
      {"bias_ih_l0", {12}},              {"bias_hh_l0", {12}},
      {"weight_ih_l0_reverse", {12, 5}}, {"weight_hh_l0_reverse", {12, 3}},
      {"bias_ih_l0_reverse", {12}},      {"bias_hh_l0_reverse", {12}},
      {"weight_ih_l1", {12, 6}},         {"weight_hh_l1", {12, 3}},
      {"bias_ih_l1", {12}},              {"bias_hh_l1", {12}},
      {"weight_ih_l1_reverse", {12, 6}}, {"weight_hh_l1_reverse", {12, 3}},
      {"bias_ih_l1_reverse", {12}},      {"bias_hh_l1_reverse", {12}}};
  const nn::NamedTensors got = lstm->named_parameters();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(got[i].first == want[i].first);
    CHECK(got[i].second.shape() == want[i].second);
  }
  // every parameter in U(-1/sqrt(3), 1/sqrt(3))
  const double k = 1 / std::sqrt(3.0);
  for (auto& [n, p] : got)
    for (real v : p.to_vector()) CHECK(std::fabs(v) <= k);
  CHECK(lstm->repr() == "LSTM(5, 3, num_layers=2, batch_first=True, bidirectional=True)");
  CHECK(nn::LSTM(nn::LSTMOptions(5, 3).bias(false).batch_first(false).dropout(0.5))->repr() ==
        "LSTM(5, 3, bias=False, dropout=0.5)");
  nn::LSTMCell cell(4, 2);
  CHECK(cell->named_parameters().size() == 4);
  CHECK(cell->named_parameters()[1].first == "weight_hh");
  CHECK(cell->repr() == "LSTMCell(4, 2)");
  CHECK(nn::LSTMCell(nn::LSTMCellOptions(4, 2).bias(false))->named_parameters().size() == 2);
}

TEST_CASE("LSTM padded batch: each row equals that sequence run alone, cut to its length") {
  manual_seed(22);
  const int64_t B = 3, T = 4, In = 3, H = 2;
  for (bool bidir : {false, true}) {
    CAPTURE(bidir);
    auto lstm = nn::LSTM(nn::LSTMOptions(In, H).num_layers(2).bidirectional(bidir));
    const int64_t D = bidir ? 2 : 1;
    Tensor x = randn({B, T, In}), h0 = randn({2 * D, B, H}), c0 = randn({2 * D, B, H});
    const std::vector<int64_t> lengths = {4, 1, 3};
    auto [out, h_n, c_n] = lstm->forward(x, std::make_tuple(h0, c0), lengths);
    CHECK(out.shape() == Shape({B, T, D * H}));
    CHECK(h_n.shape() == Shape({2 * D, B, H}));
    for (int64_t b = 0; b < B; ++b) {
      CAPTURE(b);
      const int64_t n = lengths[b];
      auto [o1, h1, c1] = lstm->forward(row(x, b, n), std::make_tuple(narrow(h0, 1, b, 1),
                                                                       narrow(c0, 1, b, 1)));
      CHECK(allclose(row(out, b, n), o1, 1e-5, 1e-6));
      CHECK(allclose(narrow(h_n, 1, b, 1), h1, 1e-5, 1e-6));
      CHECK(allclose(narrow(c_n, 1, b, 1), c1, 1e-5, 1e-6));
      // padded positions of the output are exactly zero
      for (int64_t t = n; t < T; ++t)
        for (int64_t j = 0; j < D * H; ++j) CHECK(out.at({b, t, j}) == 0);
    }
    // the forward direction's h_n is the output at each row's last valid step
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < H; ++j)
        CHECK(h_n.at({D, b, j}) == out.at({b, lengths[b] - 1, j}));  // layer 1, forward
  }
}

TEST_CASE("LSTM padded steps receive no gradient and their values do not matter") {
  manual_seed(23);
  const int64_t B = 3, T = 3, In = 2, H = 3;
  auto lstm = nn::LSTM(nn::LSTMOptions(In, H).num_layers(2).bidirectional(true));
  const std::vector<int64_t> lengths = {3, 1, 2};
  Tensor x = randn({B, T, In});
  Tensor x2 = x.detach();  // the same values, except padded positions set to garbage
  x2 = clone(x2);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = lengths[b]; t < T; ++t)
      for (int64_t i = 0; i < In; ++i) x2.data()[(b * T + t) * In + i] = real(100 + t);
  auto run = [&](const Tensor& input) {
    Tensor xi = input.detach().requires_grad_();
    lstm->zero_grad();
    auto [out, h_n, c_n] = lstm->forward(xi, {}, lengths);
    sum(out * out) .backward();
    std::vector<Tensor> r = {out.detach(), xi.grad()};
    (void)h_n;
    (void)c_n;
    for (const Tensor& p : lstm->parameters()) r.push_back(p.grad());
    return r;
  };
  const auto a = run(x), b = run(x2);
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    if (i == 1) continue;  // x's gradient is compared below
    CHECK(allclose(a[i], b[i], 1e-6, 1e-7));
  }
  const Tensor dx = a[1];
  for (int64_t bb = 0; bb < B; ++bb)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < In; ++i) {
        const real g = dx.at({bb, t, i});
        if (t >= lengths[bb]) CHECK(g == 0);
        else CHECK(g != 0);
      }
}

TEST_CASE("LSTM: a padding mask gives what its lengths give; batch_first(false)") {
  manual_seed(24);
  auto lstm = nn::LSTM(nn::LSTMOptions(2, 3).bidirectional(true));
  Tensor x = randn({2, 3, 2});
  Tensor mask = from_vector({1, 1, 0, 1, 1, 1}, {2, 3});
  auto [o1, h1, c1] = lstm->forward(x, {}, std::vector<int64_t>{2, 3});
  auto [o2, h2, c2] = lstm->forward(x, {}, mask);
  CHECK(allclose(o1, o2, 0, 0));
  CHECK(allclose(h1, h2, 0, 0));
  CHECK(allclose(c1, c2, 0, 0));
  CHECK_THROWS_AS(lstm->forward(x, {}, from_vector({1, 0, 1, 1, 1, 1}, {2, 3})), Error);
  CHECK_THROWS_AS(lstm->forward(x, {}, from_vector({0, 0, 0, 1, 1, 1}, {2, 3})), Error);
  CHECK_THROWS_AS(lstm->forward(x, {}, ones({3, 2})), Error);

  auto tm = nn::LSTM(nn::LSTMOptions(2, 3).bidirectional(true).batch_first(false));
  for (size_t i = 0; i < lstm->parameters().size(); ++i) {
    Tensor p = tm->parameters()[i];
    NoGradGuard ng;
    p.detach().copy_(lstm->parameters()[i]);
  }
  auto [o3, h3, c3] = tm->forward(transpose(x, 0, 1), {}, std::vector<int64_t>{2, 3});
  CHECK(o3.shape() == Shape({3, 2, 6}));
  CHECK(allclose(transpose(o3, 0, 1), o1, 1e-6, 1e-7));
  CHECK(allclose(h3, h1, 1e-6, 1e-7));
}

TEST_CASE("LSTMCell: zero state by default, the fused op underneath, errors") {
  manual_seed(25);
  auto cell = nn::LSTMCell(nn::LSTMCellOptions(3, 2));
  Tensor x = randn({4, 3});
  auto [h, c] = cell->forward(x);
  auto [h2, c2] = cell->forward(x, std::make_tuple(zeros({4, 2}), zeros({4, 2})));
  auto [h3, c3] = lstm_cell(x, zeros({4, 2}), zeros({4, 2}), cell->weight_ih, cell->weight_hh,
                            cell->bias_ih, cell->bias_hh);
  CHECK(allclose(h, h2, 0, 0));
  CHECK(allclose(c, c3, 0, 0));
  CHECK(allclose(h, h3, 0, 0));
  std::tie(h, c) = cell->forward(x, std::make_tuple(h, c));  // a seq2seq decoder loop
  CHECK(h.shape() == Shape({4, 2}));
  CHECK_THROWS_WITH_AS(cell->forward(zeros({4, 5})), doctest::Contains("LSTMCell"), Error);
  CHECK_THROWS_AS(cell->forward(zeros({4, 1, 3})), Error);
  CHECK_THROWS_AS(cell->forward(x, std::make_tuple(zeros({4, 2}), zeros({4, 3}))), Error);
  CHECK_THROWS_AS(cell->forward(x, std::make_tuple(zeros({3, 2}), zeros({3, 2}))), Error);
}

TEST_CASE("LSTM errors: width, rank, lengths, initial state, options") {
  auto lstm = nn::LSTM(nn::LSTMOptions(3, 2).num_layers(2));
  Tensor x = zeros({2, 4, 3});
  CHECK_NOTHROW(lstm->forward(x));
  CHECK_THROWS_WITH_AS(lstm->forward(zeros({2, 4, 5})), doctest::Contains("input_size is 3"), Error);
  CHECK_THROWS_WITH_AS(lstm->forward(zeros({4, 3})), doctest::Contains("3-D"), Error);
  CHECK_THROWS_WITH_AS(lstm->forward(x, {}, std::vector<int64_t>{5, 2}),
                       doctest::Contains("lengths[0] = 5"), Error);
  CHECK_THROWS_WITH_AS(lstm->forward(x, {}, std::vector<int64_t>{4, 0}),
                       doctest::Contains("lengths[1] = 0"), Error);
  CHECK_THROWS_WITH_AS(lstm->forward(x, {}, std::vector<int64_t>{4, 2, 1}),
                       doctest::Contains("3 lengths for a batch of 2"), Error);
  Tensor good = zeros({2, 2, 2});
  CHECK_NOTHROW(lstm->forward(x, std::make_tuple(good, good)));
  CHECK_THROWS_WITH_AS(lstm->forward(x, std::make_tuple(zeros({1, 2, 2}), good)),
                       doctest::Contains("h0 must be"), Error);
  CHECK_THROWS_WITH_AS(lstm->forward(x, std::make_tuple(good, zeros({2, 2, 3}))),
                       doctest::Contains("c0 must be"), Error);
  CHECK_THROWS_AS(lstm->forward(x, std::make_tuple(good, Tensor())), Error);
  CHECK_THROWS_AS(nn::LSTM(nn::LSTMOptions(0, 2)), Error);
  CHECK_THROWS_AS(nn::LSTM(nn::LSTMOptions(3, 2).num_layers(0)), Error);
  CHECK_THROWS_AS(nn::LSTM(nn::LSTMOptions(3, 2).dropout(1.0)), Error);
}

TEST_CASE("LSTM inter-layer dropout: only in training, only between layers") {
  manual_seed(26);
  auto lstm = nn::LSTM(nn::LSTMOptions(3, 4).num_layers(2).dropout(0.5));
  Tensor x = randn({2, 5, 3});
  lstm->eval();
  const Tensor e1 = lstm->forward(x).output, e2 = lstm->forward(x).output;
  CHECK(allclose(e1, e2, 0, 0));
  lstm->train();
  const Tensor t1 = lstm->forward(x).output;
  CHECK_FALSE(allclose(t1, e1, 1e-3, 1e-4));
  // one layer: the dropout option has no effect
  auto one = nn::LSTM(nn::LSTMOptions(3, 4).dropout(0.5));
  one->train();
  CHECK(allclose(one->forward(x).output, one->forward(x).output, 0, 0));
}

TEST_CASE("GRU: names, padded rows equal the sequence alone, errors") {
  manual_seed(27);
  auto gru = nn::GRU(nn::GRUOptions(3, 2).num_layers(2).bidirectional(true));
  const nn::NamedTensors ps = gru->named_parameters();
  REQUIRE(ps.size() == 16);
  CHECK(ps[0].first == "weight_ih_l0");
  CHECK(ps[0].second.shape() == Shape({6, 3}));
  CHECK(ps[12].first == "weight_ih_l1_reverse");
  CHECK(ps[12].second.shape() == Shape({6, 4}));
  CHECK(gru->repr() == "GRU(3, 2, num_layers=2, batch_first=True, bidirectional=True)");
  Tensor x = randn({2, 3, 3});
  const std::vector<int64_t> lengths = {2, 3};
  auto [out, h_n] = gru->forward(x, Tensor(), lengths);
  for (int64_t b = 0; b < 2; ++b) {
    auto [o1, h1] = gru->forward(row(x, b, lengths[b]));
    CHECK(allclose(row(out, b, lengths[b]), o1, 1e-5, 1e-6));
    CHECK(allclose(narrow(h_n, 1, b, 1), h1, 1e-5, 1e-6));
  }
  CHECK(out.at({0, 2, 3}) == 0);
  CHECK_THROWS_AS(gru->forward(zeros({2, 3, 4})), Error);
  CHECK_THROWS_AS(gru->forward(x, zeros({4, 2, 3})), Error);
  CHECK_THROWS_AS(gru->forward(x, Tensor(), std::vector<int64_t>{4, 1}), Error);
  auto cell = nn::GRUCell(3, 2);
  CHECK(cell->forward(zeros({5, 3})).shape() == Shape({5, 2}));
  CHECK_THROWS_AS(cell->forward(zeros({5, 2})), Error);
  CHECK(cell->repr() == "GRUCell(3, 2)");
}

TEST_CASE("LSTM: backward twice with retain_graph accumulates twice (the input's step buffer)") {
  manual_seed(28);
  auto lstm = nn::LSTM(nn::LSTMOptions(2, 3).bidirectional(true));
  Tensor x = randn({2, 4, 2}).requires_grad_();
  Tensor loss = sum(lstm->forward(x, {}, std::vector<int64_t>{4, 2}).output);
  loss.backward(Tensor(), true);
  const Tensor g1 = clone(x.grad());
  loss.backward();
  CHECK(allclose(x.grad(), g1 * 2.0, 1e-6, 1e-7));
  CHECK(g1.at({1, 3, 0}) == 0);  // a padded step
  CHECK(g1.at({1, 1, 0}) != 0);
}
