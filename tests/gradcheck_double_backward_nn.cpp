// gradcheck_double_backward_nn.cpp - gradgradcheck (double build) of the network ops whose
// backward supports create_graph: softmax and log_softmax, layer_norm, linear_gelu, dropout, where and
// masked_fill, index_select, gather, embedding, the losses, LSTM and GRU cells, the
// composed attention paths, linear attention, rotary and relative positions. Fused ops
// (layer_norm, the losses, lstm_cell) differentiate their composed twin under create_graph
// (autograd/engine/composed_backward.h); these checks hold them to finite differences.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/engine/function.h>
#include <heed/autograd/ops/attention/linear_attention.h>
#include <heed/autograd/ops/attention/relative_position.h>
#include <heed/autograd/ops/attention/rope.h>
#include <heed/autograd/ops/attention/scaled_dot_product.h>
#include <heed/autograd/ops/normalize.h>
#include <heed/layers/attention/multihead_attention.h>
#include <heed/autograd/ops/broadcast.h>
#include <heed/autograd/ops/compare.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/ops/embedding.h>
#include <heed/autograd/ops/gru_layer.h>
#include <heed/autograd/ops/indexing.h>
#include <heed/autograd/ops/layer_norm.h>
#include <heed/autograd/ops/linear.h>
#include <heed/autograd/ops/loss.h>
#include <heed/autograd/ops/lstm_cell.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

void check_gradgrad(const TensorFn& f, const std::vector<Tensor>& inputs) {
  const GradcheckResult r = gradgradcheck(f, inputs);
  CHECK_MESSAGE(r.ok, r.message);
}

// y = x^2 * w        dx = dy * 2 x w    dw = sum(dy * x^2), a custom Function in heed ops
struct SquareScale : autograd::Function<SquareScale> {
  static Tensor forward(autograd::AutogradContext* ctx, Tensor x, Tensor w) {
    ctx->save_for_backward({x, w});
    return x * x * w;
  }
  static autograd::tensor_list backward(autograd::AutogradContext* ctx, autograd::tensor_list g) {
    const auto s = ctx->get_saved_variables();
    return {g[0] * s[0] * s[1] * 2, sum_to(g[0] * s[0] * s[0], s[1].shape())};
  }
};

}  // namespace

TEST_CASE("gradgradcheck a custom autograd::Function whose backward uses heed ops") {
  manual_seed(369);
  Tensor x = param({3, 2}), w = param({2});
  check_gradgrad([](const V& v) { return SquareScale::apply(v[0], v[1]); }, {x, w});
}

TEST_CASE("gradgradcheck softmax and log_softmax over each dim") {
  manual_seed(361);
  Tensor x = param({2, 3, 4});
  for (int64_t d : {0, 1, 2, -1}) {
    CAPTURE(d);
    check_gradgrad([d](const V& v) { return softmax(v[0], d); }, {x});
    check_gradgrad([d](const V& v) { return log_softmax(v[0], d); }, {x});
  }
}

TEST_CASE("gradgradcheck linear_gelu (its composed twin under create_graph), both forms, with and without bias") {
  manual_seed(14);
  const Tensor x = param({3, 4}), w = param({5, 4}), b = param({5});
  for (const char* approximate : {"none", "tanh"}) {
    const std::string form = approximate;
    CAPTURE(form);
    check_gradgrad([&](const V& v) { return linear_gelu(v[0], v[1], v[2], approximate); }, {x, w, b});
    check_gradgrad([&](const V& v) { return linear_gelu(v[0], v[1], Tensor(), approximate); }, {x, w});
  }
}

TEST_CASE("gradgradcheck layer_norm with and without affine parameters") {
  manual_seed(362);
  Tensor x = param({3, 2, 4}), w = param({4}), b = param({4});
  check_gradgrad([](const V& v) { return layer_norm(v[0], {4}, v[1], v[2]); }, {x, w, b});
  check_gradgrad([](const V& v) { return layer_norm(v[0], {2, 4}); }, {x});
}

TEST_CASE("gradgradcheck dropout (a fixed mask), where, masked_fill, triu") {
  manual_seed(363);
  Tensor x = param({4, 5}), y = param({4, 5});
  check_gradgrad([](const V& v) {
    manual_seed(7);  // the same mask at every call
    return dropout(v[0] * v[0], 0.3, true);
  }, {x});
  const Tensor cond = gt(randn({4, 5}), real(0));
  check_gradgrad([cond](const V& v) { return where(cond, v[0] * v[1], tanh(v[1])); }, {x, y});
  const Tensor mask = gt(randn({1, 5}), real(0));
  check_gradgrad([mask](const V& v) { return masked_fill(v[0] * v[0], mask, 2); }, {x});
  check_gradgrad([](const V& v) { return triu(v[0] * v[0], 1); }, {x});
}

TEST_CASE("gradgradcheck index_select, gather, embedding (repeated ids, padding)") {
  manual_seed(364);
  Tensor x = param({4, 3});
  const IndexTensor rows({2, 0, 2});
  check_gradgrad([rows](const V& v) { return index_select(v[0] * v[0], 0, rows); }, {x});
  const IndexTensor cols({0, 2, 2, 1, 0, 0}, {2, 3});
  check_gradgrad([cols](const V& v) { return gather(tanh(v[0]), 1, cols); }, {x});
  Tensor w = param({5, 3});
  const IndexTensor ids({1, 4, 1, 0}, {2, 2});
  check_gradgrad([ids](const V& v) { return tanh(embedding(ids, v[0])); }, {w});
  check_gradgrad([ids](const V& v) { return tanh(embedding(ids, v[0], 1)); }, {w});
}

TEST_CASE("gradgradcheck the losses: mse, cross_entropy with its options, nll, bce with logits and on probabilities, soft margin") {
  manual_seed(365);
  Tensor x = param({4, 3}), t = param({4, 3});
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None})
    check_gradgrad([r](const V& v) { return mse_loss(tanh(v[0]), v[1], r); }, {x, t});
  const IndexTensor target({0, 2, 1, 2});
  const Tensor cw = from_vector({0.5, 2, 1}, {3});
  check_gradgrad([&](const V& v) { return cross_entropy_loss(v[0], target, Tensor(), Reduction::Mean, -100, 0); }, {x});
  check_gradgrad([&](const V& v) { return cross_entropy_loss(v[0], target, cw, Reduction::Mean, 2, 0.1); }, {x});
  check_gradgrad([&](const V& v) { return cross_entropy_loss(v[0], target, Tensor(), Reduction::None, -100, 0.2); }, {x});
  Tensor x3 = param({2, 3, 2});
  const IndexTensor t3({0, 2, 1, 1}, {2, 2});
  check_gradgrad([&](const V& v) { return cross_entropy_loss(v[0], t3, Tensor(), Reduction::Sum, -100, 0); }, {x3});
  check_gradgrad([&](const V& v) { return nll_loss(log_softmax(v[0], 1), target, cw, Reduction::Mean, -100); }, {x});
  Tensor p = rand({4, 3});
  check_gradgrad([p](const V& v) {
    return binary_cross_entropy_with_logits(v[0], p, Tensor(), Tensor(), Reduction::Mean);
  }, {x});
  Tensor q = (rand({4, 3}) * real(0.8) + real(0.1)).detach().requires_grad_(), y = param({4, 3});
  for (Reduction r : {Reduction::Mean, Reduction::None})
    check_gradgrad([r](const V& v) { return binary_cross_entropy(v[0], v[1], Tensor(), r); }, {q, y});
  check_gradgrad([](const V& v) { return binary_cross_entropy(sigmoid(v[0]), v[1], Tensor(), kSum); }, {x, y});
  for (Reduction r : {Reduction::Mean, Reduction::None})  // the twin: softplus(-y x)
    check_gradgrad([r](const V& v) { return soft_margin_loss(v[0], v[1], r); }, {x, y});
}

TEST_CASE("gradgradcheck LSTM cell (fused) and GRU cell (composed)") {
  manual_seed(366);
  const int64_t B = 2, In = 3, H = 2;
  Tensor x = param({B, In}), h = param({B, H}), c = param({B, H});
  Tensor w_ih = param({4 * H, In}, 0.5), w_hh = param({4 * H, H}, 0.5), b_ih = param({4 * H}), b_hh = param({4 * H});
  check_gradgrad([](const V& v) { return lstm_cell_packed(v[0], v[1], v[2], v[3], v[4], v[5], v[6]); },
                 {x, h, c, w_ih, w_hh, b_ih, b_hh});
  Tensor g_ih = param({3 * H, In}, 0.5), g_hh = param({3 * H, H}, 0.5), gb_ih = param({3 * H}), gb_hh = param({3 * H});
  check_gradgrad([](const V& v) { return gru_cell_reference(v[0], v[1], v[2], v[3], v[4], v[5]); },
                 {x, h, g_ih, g_hh, gb_ih, gb_hh});
}

TEST_CASE("gradgradcheck attention: composed scaled_dot_product_attention, MultiheadAttention with weights or a bias") {
  manual_seed(367);
  Tensor q = param({1, 2, 3, 2}), k = param({1, 2, 4, 2}), v = param({1, 2, 4, 2}), bias = param({1, 2, 3, 4});
  Tensor pad = ones({1, 4});
  pad.data()[3] = 0;
  const AttentionMask m = AttentionMask().key_padding(pad);
  check_gradgrad([m](const V& x) { return scaled_dot_product_attention(x[0], x[1], x[2], m).context; }, {q, k, v});
  check_gradgrad([](const V& x) {
    return scaled_dot_product_attention(x[0], x[1], x[2], AttentionMask(), x[3]).context;
  }, {q, k, v, bias});
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(4, 2));
  Tensor xq = param({2, 3, 4}), xk = param({2, 4, 4});
  check_gradgrad([mha](const V& x) { return mha->forward(x[0], x[1], x[1], {}, {}, true).output; }, {xq, xk});
  Tensor hb = param({1, 2, 3, 4});
  check_gradgrad([mha](const V& x) { return mha->forward(x[0], x[1], x[1], {}, x[2], false).output; }, {xq, xk, hb});
}

TEST_CASE("gradgradcheck linear attention, rotary, relative buckets, normalize (composed twins)") {
  manual_seed(368);
  Tensor q = param({1, 3, 2}), k = param({1, 3, 2}), v = param({1, 3, 2});
  for (bool causal : {false, true})
    check_gradgrad([causal](const V& x) { return linear_attention(x[0], x[1], x[2], causal); }, {q, k, v});
  const RotaryTable t = rotary_table(8, 4);
  Tensor r = param({2, 3, 4});
  check_gradgrad([t](const V& x) { return rotary(x[0] * x[0], t, 2); }, {r});
  const RelativeBuckets b = relative_buckets(3, 4, 2);
  Tensor p = param({2, b.Tq, b.count()}), a = param({2, b.Tq, b.Tk});
  check_gradgrad([b](const V& x) { return tanh(gather_buckets(x[0], b)); }, {p});
  check_gradgrad([b](const V& x) { return tanh(scatter_buckets(x[0], b)); }, {a});
  Tensor n = param({3, 4});
  for (double pw : {2.0, 3.0})
    check_gradgrad([pw](const V& x) { return normalize(x[0], pw, 1); }, {n});
}
