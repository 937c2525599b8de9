// test_lstm_layer.cpp - the fused LSTM layer (autograd/ops/lstm_layer.h, what nn::LSTM runs)
// against its composed twin: the per-step loop of layers/recurrent_scan.h running
// lstm_cell_reference, on padded batches, both directions, outputs and every gradient.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/layer_steps.h>
#include <heed/autograd/ops/lstm_cell.h>
#include <heed/autograd/ops/lstm_layer.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/recurrent_scan.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;
using heed::test::param;

namespace {

// The composed twin of lstm_layer: one lstm_cell_reference per step, padding blended.
LSTMLayerOut composed(const Tensor& x, const Tensor& h0, const Tensor& c0, const RecurrentWeights& w,
                      const std::vector<int64_t>& len, bool reverse) {
  nn::detail::State last;
  const auto cell = [&](const Tensor& x_t, const nn::detail::State& s) {
    auto [h, c] = lstm_cell_reference(x_t, s[0], s[1], w.w_ih, w.w_hh, w.b_ih, w.b_hh);
    return nn::detail::State{h, c};
  };
  const Tensor out = nn::detail::scan(x, {h0, c0}, len, reverse, cell, last);
  return {out, last[0], last[1]};
}

}  // namespace

TEST_CASE("lstm_layer (fused) == the composed per-step loop: outputs and every gradient") {
  manual_seed(41);
  const int64_t B = 4, T = 5, In = 3, H = 4;
  Tensor x = param({B, T, In}), h0 = param({B, H}, 0.5), c0 = param({B, H}, 0.5);
  Tensor w_ih = param({4 * H, In}, 0.4), w_hh = param({4 * H, H}, 0.4);
  Tensor b_ih = param({4 * H}, 0.3), b_hh = param({4 * H}, 0.3);
  const Tensor dout = randn({B, T, H}), dh = randn({B, H}), dc = randn({B, H});
  const std::vector<Tensor> leaves = {x, h0, c0, w_ih, w_hh, b_ih, b_hh};
  const char* names[] = {"out", "h_n", "c_n", "dx", "dh0", "dc0", "dw_ih", "dw_hh", "db_ih", "db_hh"};
  for (const std::vector<int64_t>& len : {std::vector<int64_t>{}, {5, 2, 3, 1}, {3, 3, 2, 1}})
    for (bool reverse : {false, true})
      for (bool bias : {true, false}) {
        CAPTURE(len.size());
        CAPTURE(reverse);
        CAPTURE(bias);
        const Tensor bi = bias ? b_ih : Tensor(), bh = bias ? b_hh : Tensor();
        auto run = [&](auto layer) {
          for (const Tensor& t : leaves) t.set_grad(Tensor());
          const LSTMLayerOut r = layer(x, h0, c0, {w_ih, w_hh, bi, bh}, len, reverse);
          sum(r.out * dout + sum(r.h_n * dh) + sum(r.c_n * dc)).backward();
          std::vector<Tensor> v = {r.out.detach(), r.h_n.detach(), r.c_n.detach()};
          for (const Tensor& t : leaves) v.push_back(t.grad().defined() ? t.grad() : zeros_like(t));
          return v;
        };
        const auto fused = run(lstm_layer), ref = run(composed);
        for (size_t i = 0; i < fused.size(); ++i) {
          const std::string name = names[i];
          CAPTURE(name);
          CAPTURE(max(abs(fused[i] - ref[i])).item());
          // float: the fused op sums dW over B*T rows in one GEMM, the twin step by step
          CHECK(allclose(fused[i], ref[i], 1e-4, 1e-4));
        }
      }
}

TEST_CASE("lstm_layer: bad shapes and lengths name the op") {
  const Tensor x = zeros({2, 3, 4}), h = zeros({2, 5}), w_ih = zeros({20, 4}), w_hh = zeros({20, 5});
  CHECK_NOTHROW(lstm_layer(x, h, h, {w_ih, w_hh}, {}, false));
  CHECK_THROWS_WITH_AS(lstm_layer(zeros({2, 4}), h, h, {w_ih, w_hh}, {}, false),
                       doctest::Contains("lstm_layer"), Error);
  CHECK_THROWS_AS(lstm_layer(x, zeros({3, 5}), h, {w_ih, w_hh}, {}, false), Error);
  CHECK_THROWS_AS(lstm_layer(x, h, h, {zeros({20, 3}), w_hh}, {}, false), Error);
  CHECK_THROWS_AS(lstm_layer(x, h, h, {w_ih, w_hh, zeros({19}), Tensor()}, {}, false), Error);
  CHECK_THROWS_AS(lstm_layer(x, h, h, {w_ih, w_hh}, {4, 1}, false), Error);
  CHECK_THROWS_AS(lstm_layer(x, h, h, {w_ih, w_hh}, {1}, false), Error);
}

TEST_CASE("lstm_layer on 2 threads (hidden units split, partial panels): the recurrence as on 1 thread, bit for bit") {
  // H = 40 is two panels and a partial third (kPanel 16): thread 0 owns units 0..15, thread 1
  // units 16..39; B = 45 rows run the kernel's 6-row blocks and a 3-row rest.
  manual_seed(45);
  const int64_t B = 45, T = 4, In = 3, H = 40;
  heed::test::FixedThreads two_threads(2);
  REQUIRE(detail::recurrence_threads(B, 4 * H, H) == 2);
  Tensor x = param({B, T, In}), h0 = param({B, H}, 0.5), c0 = param({B, H}, 0.5);
  Tensor w_ih = param({4 * H, In}, 0.3), w_hh = param({4 * H, H}, 0.3);
  Tensor b_ih = param({4 * H}, 0.3), b_hh = param({4 * H}, 0.3);
  const std::vector<Tensor> leaves = {x, h0, c0, w_ih, w_hh, b_ih, b_hh};
  std::vector<int64_t> len(B);
  for (int64_t b = 0; b < B; ++b) len[b] = 1 + b % T;
  const Tensor dout = randn({B, T, H}), dh = randn({B, H}), dc = randn({B, H});
  for (bool reverse : {false, true}) {
    CAPTURE(reverse);
    auto run = [&](auto layer) {
      for (const Tensor& t : leaves) t.set_grad(Tensor());
      const LSTMLayerOut r = layer(x, h0, c0, {w_ih, w_hh, b_ih, b_hh}, len, reverse);
      (sum(r.out * dout) + sum(r.h_n * dh) + sum(r.c_n * dc)).backward();
      std::vector<Tensor> v = {r.out.detach(), r.h_n.detach(), r.c_n.detach()};
      for (const Tensor& t : leaves) v.push_back(t.grad());
      return v;
    };
    const auto two = run(lstm_layer), ref = run(composed);
    set_num_threads(1);
    const auto one = run(lstm_layer);
    set_num_threads(2);
    for (size_t i = 0; i < two.size(); ++i) {
      CAPTURE(i);
      // the recurrence's results (out, h_n, c_n, dh0, dc0) do not depend on the split; the
      // weight gradients are BLAS GEMMs over B*T rows, whose sums may follow the team size
      if (i <= 2 || i == 4 || i == 5) CHECK(max(abs(two[i] - one[i])).item() == 0);
      CHECK(allclose(two[i], ref[i], 1e-4, 1e-4));
    }
  }
}

TEST_CASE("lstm_layer: dW_hh alone, dW_ih alone and both at once (one GEMM) agree") {
  manual_seed(47);
  const int64_t B = 3, T = 4, In = 5, H = 6;
  const Tensor x = randn({B, T, In}), h0 = randn({B, H}), c0 = randn({B, H});
  const Tensor w_ih0 = randn({4 * H, In}), w_hh0 = randn({4 * H, H}), dout = randn({B, T, H});
  const auto grads = [&](bool need_ih, bool need_hh) {
    Tensor w_ih = w_ih0.clone(), w_hh = w_hh0.clone();
    if (need_ih) w_ih.requires_grad_();
    if (need_hh) w_hh.requires_grad_();
    sum(lstm_layer(x, h0, c0, {w_ih, w_hh}, {4, 2, 3}, false).out * dout).backward();
    return std::make_pair(w_ih.grad(), w_hh.grad());
  };
  const auto both = grads(true, true), ih = grads(true, false), hh = grads(false, true);
  CHECK(!ih.second.defined());
  CHECK(!hh.first.defined());
  CHECK(allclose(ih.first, both.first, 1e-6, 1e-6));
  CHECK(allclose(hh.second, both.second, 1e-6, 1e-6));
}
