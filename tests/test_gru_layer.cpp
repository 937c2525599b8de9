// test_gru_layer.cpp - the fused GRU layer (autograd/ops/gru_layer.h, what nn::GRU runs)
// against its composed twin: the per-step loop of layers/recurrent_scan.h running
// gru_cell_reference, on padded batches, both directions, outputs and every gradient.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/gru_layer.h>
#include <heed/autograd/ops/layer_steps.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/gru.h>
#include <heed/layers/recurrent_scan.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_fused_matches_composed;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

// The composed twin of gru_layer: one gru_cell_reference per step, padding blended.
GRULayerOut composed(const Tensor& x, const Tensor& h0, const RecurrentWeights& w,
                     const std::vector<int64_t>& len, bool reverse) {
  nn::detail::State last;
  const auto cell = [&](const Tensor& x_t, const nn::detail::State& s) {
    return nn::detail::State{gru_cell_reference(x_t, s[0], w.w_ih, w.w_hh, w.b_ih, w.b_hh)};
  };
  const Tensor out = nn::detail::scan(x, {h0}, len, reverse, cell, last);
  return {out, last[0]};
}

// [out | h_n] as one flat tensor, for check_fused_matches_composed. v = {x, h0, w_ih, w_hh}
// and, when bias, b_ih and b_hh.
template <class Layer>
TensorFn flat(Layer layer, const std::vector<int64_t>& len, bool reverse) {
  return [layer, len, reverse](const V& v) {
    const Tensor b_ih = v.size() > 4 ? v[4] : Tensor(), b_hh = v.size() > 4 ? v[5] : Tensor();
    const GRULayerOut r = layer(v[0], v[1], {v[2], v[3], b_ih, b_hh}, len, reverse);
    return cat({flatten(r.out), flatten(r.h_n)}, 0);
  };
}

}  // namespace

TEST_CASE("gru_layer (fused) == the composed per-step loop: outputs and every gradient") {
  manual_seed(43);
  const int64_t B = 4, T = 5, In = 3, H = 4;
  const Tensor x = param({B, T, In}), h0 = param({B, H}, 0.5);
  const Tensor w_ih = param({3 * H, In}, 0.4), w_hh = param({3 * H, H}, 0.4);
  const Tensor b_ih = param({3 * H}, 0.3), b_hh = param({3 * H}, 0.3);
  for (const std::vector<int64_t>& len : {std::vector<int64_t>{}, {5, 2, 3, 1}, {3, 3, 2, 1}})
    for (bool reverse : {false, true})
      for (bool bias : {true, false}) {
        CAPTURE(len.size());
        CAPTURE(reverse);
        CAPTURE(bias);
        const V inputs = bias ? V{x, h0, w_ih, w_hh, b_ih, b_hh} : V{x, h0, w_ih, w_hh};
        // float: the fused op sums dW over B*T rows in one GEMM, the twin step by step
        check_fused_matches_composed(flat(gru_layer, len, reverse), flat(composed, len, reverse),
                                     inputs, 1e-4, 1e-4);
      }
}

TEST_CASE("nn::GRU (fused layers) == the same layers composed: 2 layers, bidirectional, padded") {
  manual_seed(44);
  const int64_t B = 3, T = 4, In = 3, H = 5;
  auto gru = nn::GRU(nn::GRUOptions(In, H).num_layers(2).bidirectional(true));
  const Tensor x = randn({B, T, In}), h0 = randn({4, B, H});
  const std::vector<int64_t> len = {4, 2, 3};
  nn::GRUOutput r = gru->forward(x, h0, len);
  // the composed path, layer by layer, through recurrent_scan's run_layers
  const auto direction = [&](int64_t l, int d, const Tensor& x_l, const nn::detail::State& s0,
                             const std::vector<int64_t>& lens, nn::detail::State& last) {
    const int64_t k = l * 2 + d;
    GRULayerOut c = composed(
        x_l, s0[0], {gru->weight_ih[k], gru->weight_hh[k], gru->bias_ih[k], gru->bias_hh[k]}, lens,
        d == 1);
    last = {c.h_n};
    return c.out;
  };
  const nn::detail::LayersOutput c = nn::detail::run_layers(
      "GRU", x, {h0}, {"h0"}, len, nn::detail::scan_config(gru->options, false), direction);
  CHECK(heed::test::allclose(r.output, c.output, 1e-5, 1e-5));
  CHECK(heed::test::allclose(r.h_n, c.last[0], 1e-5, 1e-5));
}

TEST_CASE("gru_layer: bad shapes and lengths name the op") {
  const Tensor x = zeros({2, 3, 4}), h = zeros({2, 5});
  const Tensor w_ih = zeros({15, 4}), w_hh = zeros({15, 5});
  CHECK_NOTHROW(gru_layer(x, h, {w_ih, w_hh}, {}, false));
  CHECK_THROWS_WITH_AS(gru_layer(zeros({2, 4}), h, {w_ih, w_hh}, {}, false),
                       doctest::Contains("gru_layer"), Error);
  CHECK_THROWS_AS(gru_layer(x, zeros({3, 5}), {w_ih, w_hh}, {}, false), Error);
  CHECK_THROWS_AS(gru_layer(x, h, {zeros({15, 3}), w_hh}, {}, false), Error);
  CHECK_THROWS_AS(gru_layer(x, h, {w_ih, zeros({20, 5})}, {}, false), Error);
  CHECK_THROWS_AS(gru_layer(x, h, {w_ih, w_hh, zeros({14}), Tensor()}, {}, false), Error);
  CHECK_THROWS_AS(gru_layer(x, h, {w_ih, w_hh}, {4, 1}, false), Error);
  CHECK_THROWS_AS(gru_layer(x, h, {w_ih, w_hh}, {1}, false), Error);
}

TEST_CASE("gru_layer on 2 threads (hidden units split, partial panels): the recurrence as on 1 thread, bit for bit") {
  // as lstm_layer's: H = 40 is two panels and a partial third, B = 60 rows
  manual_seed(46);
  const int64_t B = 60, T = 4, In = 3, H = 40;
  heed::test::FixedThreads two_threads(2);
  REQUIRE(detail::recurrence_threads(B, 3 * H, H) == 2);
  const Tensor x = param({B, T, In}), h0 = param({B, H}, 0.5);
  const Tensor w_ih = param({3 * H, In}, 0.3), w_hh = param({3 * H, H}, 0.3);
  const Tensor b_ih = param({3 * H}, 0.3), b_hh = param({3 * H}, 0.3);
  const V leaves = {x, h0, w_ih, w_hh, b_ih, b_hh};
  std::vector<int64_t> len(B);
  for (int64_t b = 0; b < B; ++b) len[b] = 1 + b % T;
  for (bool reverse : {false, true}) {
    CAPTURE(reverse);
    const TensorFn fused = flat(gru_layer, len, reverse);
    check_fused_matches_composed(fused, flat(composed, len, reverse), leaves, 1e-4, 1e-4);
    const Tensor dy = randn({B * T * H + B * H});
    auto run = [&] {
      for (const Tensor& t : leaves) t.set_grad(Tensor());
      const Tensor y = fused(leaves);
      y.backward(dy);
      V v = {y.detach()};
      for (const Tensor& t : leaves) v.push_back(t.grad());
      return v;
    };
    const V two = run();
    set_num_threads(1);
    const V one = run();
    set_num_threads(2);
    for (size_t i = 0; i < two.size(); ++i) {
      CAPTURE(i);
      // the recurrence's results ([out | h_n], dh0) do not depend on the split; the weight
      // gradients are BLAS GEMMs over B*T rows, whose sums may follow the team size
      if (i <= 2) CHECK(max(abs(two[i] - one[i])).item() == 0);
    }
  }
}
