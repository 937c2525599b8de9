// test_mha.cpp - behaviour of nn::MultiheadAttention and nn::SelfAttention: parameter
// names, shapes and initialisation as torch; the forward pass against the formula
// written head by head; weights averaged or per head; masks, including a batch element
// with no visible key; dropout; the error messages; repr.
#include <cmath>
#include <set>
#include <string>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/compare.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/engine/node.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/attention/scaled_dot_product.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/module.h>
#include <heed/layers/attention/multihead_attention.h>
#include <heed/layers/attention/self_attention.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;
using heed::test::allclose;

namespace {

std::vector<std::string> names(const nn::Module& m) {
  std::vector<std::string> out;
  for (auto& [n, p] : m.named_parameters()) out.push_back(n + " " + p.shape().str());
  return out;
}

bool all_finite(const Tensor& t) {
  for (real x : t.to_vector())
    if (!std::isfinite(x)) return false;
  return true;
}

real max_abs(const Tensor& t) {
  real m = 0;
  for (real x : t.to_vector()) m = std::max(m, std::fabs(x));
  return m;
}

// MultiHead(Q, K, V) = Concat(head_1..head_h) W^O, head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V),
// written one head at a time from the module's weights (the reference for forward()).
Tensor mha_by_hand(const nn::MultiheadAttentionImpl& mha, const Tensor& q, const Tensor& k,
                   const Tensor& v, const nn::AttentionMask& m) {
  const int64_t H = mha.options.num_heads(), dk = mha.options.head_dim_k(), dv = mha.options.head_dim_v();
  const bool packed = mha.in_proj_weight.defined();
  const Tensor Wq = packed ? narrow(mha.in_proj_weight, 0, 0, H * dk) : mha.q_proj_weight;
  const Tensor Wk = packed ? narrow(mha.in_proj_weight, 0, H * dk, H * dk) : mha.k_proj_weight;
  const Tensor Wv = packed ? narrow(mha.in_proj_weight, 0, 2 * H * dk, H * dv) : mha.v_proj_weight;
  const Tensor& b = mha.in_proj_bias;
  std::vector<Tensor> heads;
  for (int64_t i = 0; i < H; ++i) {
    const auto proj = [&](const Tensor& x, const Tensor& W, int64_t off, int64_t d) {
      Tensor y = matmul(x, narrow(W, 0, i * d, d).transpose(0, 1));
      return b.defined() ? y + narrow(b, 0, off + i * d, d) : y;
    };
    heads.push_back(nn::scaled_dot_product_attention(proj(q, Wq, 0, dk), proj(k, Wk, H * dk, dk),
                                                     proj(v, Wv, 2 * H * dk, dv), m).context);
  }
  Tensor y = matmul(cat(heads, 2), mha.out_proj->weight.transpose(0, 1));
  return mha.out_proj->bias.defined() ? y + mha.out_proj->bias : y;
}

}  // namespace

TEST_CASE("MultiheadAttention: parameter names and shapes are torch's state_dict keys") {
  nn::MultiheadAttention packed(nn::MultiheadAttentionOptions(8, 2));
  CHECK(names(*packed) == std::vector<std::string>{"in_proj_weight (24,8)", "in_proj_bias (24)",
                                                  "out_proj.weight (8,8)", "out_proj.bias (8)"});
  nn::MultiheadAttention kv(nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(3));
  CHECK(names(*kv) == std::vector<std::string>{"q_proj_weight (8,8)", "k_proj_weight (8,5)",
                                              "v_proj_weight (8,3)", "in_proj_bias (24)",
                                              "out_proj.weight (8,8)", "out_proj.bias (8)"});
  nn::MultiheadAttention heads(nn::MultiheadAttentionOptions(6, 2).head_dim_k(4).head_dim_v(5));
  CHECK(names(*heads) == std::vector<std::string>{"q_proj_weight (8,6)", "k_proj_weight (8,6)",
                                                 "v_proj_weight (10,6)", "in_proj_bias (26)",
                                                 "out_proj.weight (6,10)", "out_proj.bias (6)"});
  nn::MultiheadAttention nobias(nn::MultiheadAttentionOptions(8, 4).bias(false));
  CHECK(names(*nobias) == std::vector<std::string>{"in_proj_weight (24,8)", "out_proj.weight (8,8)"});
  nn::MultiheadAttention odd(nn::MultiheadAttentionOptions(7, 2).head_dim_k(3).head_dim_v(3));
  CHECK(odd->out_proj->weight.shape() == Shape{7, 6});  // 7 % 2 != 0 is fine with explicit d_k, d_v
}

TEST_CASE("MultiheadAttention: torch's initialisation (xavier_uniform_, zero biases, Linear's W^O)") {
  manual_seed(601);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(16, 4));
  const real a = real(std::sqrt(6.0 / (16 + 48)));  // xavier on (3E, E): fan_in E, fan_out 3E
  CHECK(max_abs(mha->in_proj_weight) <= a);
  CHECK(max_abs(mha->in_proj_weight) > 0.9 * a);
  CHECK(max_abs(mha->in_proj_bias) == 0);
  CHECK(max_abs(mha->out_proj->bias) == 0);
  const real b = real(1 / std::sqrt(16.0));  // kaiming_uniform_(a = sqrt(5)): 1/sqrt(fan_in)
  CHECK(max_abs(mha->out_proj->weight) <= b);
  CHECK(max_abs(mha->out_proj->weight) > 0.9 * b);
  nn::MultiheadAttention kv(nn::MultiheadAttentionOptions(16, 4).kdim(8));
  CHECK(max_abs(kv->k_proj_weight) <= real(std::sqrt(6.0 / (16 + 8))));
  CHECK(max_abs(kv->k_proj_weight) > real(std::sqrt(6.0 / (16 + 32))));  // not the packed bound
}

TEST_CASE("MultiheadAttention: forward equals the formula written head by head") {
  manual_seed(602);
  Tensor x = randn({2, 5, 8}), mem = randn({2, 3, 8});
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  {
    NoGradGuard g;
    mha->in_proj_bias.copy_(randn({24}));
    mha->out_proj->bias.copy_(randn({8}));
  }
  const nn::AttentionMask causal = nn::AttentionMask().causal();
  CHECK(allclose(mha->forward(x, x, x).output, mha_by_hand(*mha, x, x, x, {}), 1e-5, 1e-5));
  CHECK(allclose(mha->forward(x, x, x, causal).output, mha_by_hand(*mha, x, x, x, causal), 1e-5, 1e-5));
  CHECK(allclose(mha->forward(x, mem, mem).output, mha_by_hand(*mha, x, mem, mem, {}), 1e-5, 1e-5));

  nn::MultiheadAttention sep(nn::MultiheadAttentionOptions(8, 3).kdim(4).vdim(6).head_dim_k(2).head_dim_v(5));
  Tensor k = randn({2, 3, 4}), v = randn({2, 3, 6});
  const nn::AttentionOutput o = sep->forward(x, k, v, causal);
  CHECK(o.output.shape() == Shape{2, 5, 8});
  CHECK(o.weights.shape() == Shape{2, 5, 3});
  CHECK(allclose(o.output, mha_by_hand(*sep, x, k, v, causal), 1e-5, 1e-5));

  nn::MultiheadAttention nb(nn::MultiheadAttentionOptions(8, 4).bias(false));
  CHECK(allclose(nb->forward(x, mem, mem).output, mha_by_hand(*nb, x, mem, mem, {}), 1e-5, 1e-5));
}

TEST_CASE("MultiheadAttention: weights averaged over heads or per head; need_weights = false") {
  manual_seed(603);
  Tensor x = randn({2, 4, 6}), mem = randn({2, 7, 6});
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(6, 3));
  const nn::AttentionOutput avg = mha->forward(x, mem, mem);
  const nn::AttentionOutput per = mha->forward(x, mem, mem, {}, {}, true, false);
  CHECK(avg.weights.shape() == Shape{2, 4, 7});
  CHECK(per.weights.shape() == Shape{2, 3, 4, 7});
  CHECK(allclose(avg.weights, mean(per.weights, 1)));
  for (real s : sum(per.weights, -1).to_vector()) CHECK(s == doctest::Approx(1).epsilon(1e-5));
  CHECK(allclose(avg.output, per.output, 0, 0));
  const nn::AttentionOutput none = mha->forward(x, mem, mem, {}, {}, false);
  CHECK_FALSE(none.weights.defined());
  CHECK(allclose(none.output, avg.output, 1e-5, 1e-6));  // flash kernel vs composed
}

TEST_CASE("MultiheadAttention: masks; a query that sees nothing outputs out_proj.bias, zero grads") {
  manual_seed(604);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(4, 2));
  {
    NoGradGuard g;
    mha->out_proj->bias.copy_(randn({4}));
  }
  Tensor x = test::param({2, 3, 4});
  Tensor pad = ones({2, 3});
  for (int j = 0; j < 3; ++j) pad.data()[3 + j] = 0;  // batch 1: every key is padding
  pad.data()[2] = 0;                                  // batch 0: key 2 is padding
  const nn::AttentionOutput o = mha->forward(x, x, x, nn::AttentionMask().key_padding(pad), {}, true, false);
  sum(o.output * randn(o.output.shape())).backward();
  CHECK(all_finite(o.output));
  CHECK(all_finite(x.grad()));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t d = 0; d < 4; ++d) CHECK(o.output.at({1, i, d}) == mha->out_proj->bias.at({d}));
  for (int64_t i = 0; i < 3 * 4; ++i) CHECK(x.grad().data()[12 + i] == 0);  // batch 1
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 3; ++i) {
      CHECK(o.weights.at({0, h, i, 2}) == 0);
      CHECK(o.weights.at({1, h, i, 0}) == 0);
    }

  // cross-attention, causal with Tq 4 > Tk 2: queries 0 and 1 see no key
  Tensor q = randn({1, 4, 4}), mem = randn({1, 2, 4});
  const nn::AttentionOutput c = mha->forward(q, mem, mem, nn::AttentionMask().causal());
  for (int64_t d = 0; d < 4; ++d) {
    CHECK(c.output.at({0, 0, d}) == mha->out_proj->bias.at({d}));
    CHECK(c.output.at({0, 1, d}) == mha->out_proj->bias.at({d}));
  }
  CHECK(c.weights.at({0, 2, 1}) == 0);
  CHECK(c.weights.at({0, 3, 1}) > 0);

  // a 3-D mask is (B, Tq, Tk), one per batch element
  Tensor m3 = ones({2, 3, 3});
  m3.data()[9 + 1] = 0;  // batch 1, query 0 may not see key 1
  const nn::AttentionOutput p = mha->forward(x, x, x, nn::AttentionMask().mask(m3), {}, true, false);
  CHECK(p.weights.at({1, 0, 0, 1}) == 0);
  CHECK(p.weights.at({1, 1, 0, 1}) == 0);
  CHECK(p.weights.at({0, 0, 0, 1}) > 0);
}

TEST_CASE("MultiheadAttention: dropout on the weights in training only") {
  manual_seed(605);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(4, 2).dropout(0.5));
  Tensor x = randn({2, 5, 4});
  const nn::AttentionOutput train = mha->forward(x, x, x, {}, {}, true, false);
  int zeros = 0;
  for (real w : train.weights.to_vector()) zeros += w == 0;
  CHECK(zeros > 0);
  mha->eval();
  const nn::AttentionOutput eval = mha->forward(x, x, x, {}, {}, true, false);
  for (real s : sum(eval.weights, -1).to_vector()) CHECK(s == doctest::Approx(1).epsilon(1e-5));
}

TEST_CASE("MultiheadAttention: errors name the layer and the shapes") {
  const auto ctor = [](const nn::MultiheadAttentionOptions& o) {
    return error_of([&] { nn::MultiheadAttention m(o); });
  };
  CHECK(ctor(nn::MultiheadAttentionOptions(10, 3)).find(
            "MultiheadAttention: embed_dim 10 is not divisible by num_heads 3") == 0);
  CHECK(ctor(nn::MultiheadAttentionOptions(10, 3).head_dim_k(4)).find("not divisible") != std::string::npos);
  CHECK(ctor(nn::MultiheadAttentionOptions(8, 0)).find("MultiheadAttention: embed_dim and num_heads") == 0);
  CHECK(ctor(nn::MultiheadAttentionOptions(8, 2).dropout(1)).find("MultiheadAttention: dropout") == 0);

  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).kdim(4));
  Tensor x = randn({2, 3, 8}), k = randn({2, 5, 4}), v = randn({2, 5, 8});
  const auto fwd = [&](const Tensor& a, const Tensor& b, const Tensor& c, const nn::AttentionMask& m = {}) {
    return error_of([&] { mha->forward(a, b, c, m); });
  };
  CHECK(fwd(x, k, v) == "(no heed::Error thrown)");  // a valid call
  CHECK(fwd(randn({2, 3, 6}), k, v) == "MultiheadAttention: query (2,3,6) is not (B, Tq, embed_dim = 8)");
  CHECK(fwd(randn({3, 8}), k, v).find("MultiheadAttention: query (3,8)") == 0);
  CHECK(fwd(x, randn({2, 5, 8}), v) == "MultiheadAttention: key (2,5,8) is not (B, Tk, kdim = 4)");
  CHECK(fwd(x, k, randn({2, 5, 4})) == "MultiheadAttention: value (2,5,4) is not (B, Tk, vdim = 8)");
  CHECK(fwd(x, randn({1, 5, 4}), v) ==
        "MultiheadAttention: batch sizes differ: query (2,3,8), key (1,5,4), value (2,5,8)");
  CHECK(fwd(x, k, randn({2, 4, 8})) ==
        "MultiheadAttention: key (2,5,4) and value (2,4,8) have different lengths Tk");
  CHECK(fwd(x, k, v, nn::AttentionMask().key_padding(ones({2, 3}))).find(
            "MultiheadAttention: key padding mask (2,3) does not match scores (2,2,3,5)") == 0);
  CHECK(fwd(x, k, v, nn::AttentionMask().mask(ones({5, 3}))) ==
        "MultiheadAttention: mask (5,3) does not broadcast to scores (2,2,3,5)");
  CHECK(fwd(x, k, v, nn::AttentionMask().mask(ones({3, 3, 5}))) ==
        "MultiheadAttention: 3-D mask (3,3,5) is not (B, Tq, Tk) = (2,3,5)");
}

TEST_CASE("MultiheadAttention: repr") {
  CHECK(nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2))->repr() ==
        "MultiheadAttention(embed_dim=8, num_heads=2)");
  CHECK(nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2).dropout(0.1).bias(false).kdim(4))->repr() ==
        "MultiheadAttention(embed_dim=8, num_heads=2, dropout=0.1, bias=False, kdim=4)");
  CHECK(nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2))->summary().find(
            "  (out_proj): Linear(in_features=8, out_features=8, bias=True)") != std::string::npos);
}

TEST_CASE("SelfAttention: a single head, returning the context and the weights") {
  manual_seed(606);
  nn::SelfAttention attn(nn::SelfAttentionOptions(6).d_k(4).d_v(3));
  CHECK(names(*attn) == std::vector<std::string>{"W_q.weight (4,6)", "W_q.bias (4)", "W_k.weight (4,6)",
                                                "W_k.bias (4)", "W_v.weight (3,6)", "W_v.bias (3)"});
  Tensor x = randn({2, 5, 6});
  const nn::AttentionMask m = nn::AttentionMask().causal();
  const auto [out, weights] = attn->forward(x, m);
  CHECK(out.shape() == Shape{2, 5, 3});
  CHECK(weights.shape() == Shape{2, 5, 5});
  const Tensor Q = attn->W_q->forward(x), K = attn->W_k->forward(x), V = attn->W_v->forward(x);
  const Tensor scores = masked_fill(matmul(Q, K.transpose(1, 2)) / real(2), triu(ones({5, 5}), 1),
                                    -INFINITY);  // / sqrt(d_k) = 2
  CHECK(allclose(weights, softmax(scores, -1)));
  CHECK(allclose(out, matmul(softmax(scores, -1), V)));
  CHECK(weights.at({0, 1, 2}) == 0);

  nn::SelfAttention plain(nn::SelfAttentionOptions(4).bias(false));
  CHECK(names(*plain) == std::vector<std::string>{"W_q.weight (4,4)", "W_k.weight (4,4)", "W_v.weight (4,4)"});
  CHECK(plain->repr() == "SelfAttention(d_model=4, d_k=4, d_v=4, bias=False)");
  CHECK(error_of([&] { plain->forward(randn({2, 3, 5})); }) ==
        "SelfAttention: input (2,3,5) is not (B, T, d_model = 4)");
  CHECK_THROWS_AS(nn::SelfAttention(nn::SelfAttentionOptions(4).dropout(-1)), Error);
}

namespace {

// The names of every op in the graph behind t (each node once).
std::set<std::string> ops_behind(const Tensor& t) {
  std::set<std::string> names;
  std::set<const Node*> seen;
  std::vector<std::shared_ptr<Node>> todo = {t.grad_fn()};
  while (!todo.empty()) {
    std::shared_ptr<Node> n = todo.back();
    todo.pop_back();
    if (!n || !seen.insert(n.get()).second) continue;
    names.insert(n->op_name());
    for (const auto& next : n->next) todo.push_back(next);
  }
  return names;
}

// need_weights = false (the flash path, heads read in place) against need_weights = true
// (the composed reference): the output and the gradients of the inputs and of every
// parameter. Returns the ops of the flash path's graph.
std::set<std::string> fast_equals_composed(nn::MultiheadAttentionImpl& mha, const Tensor& q,
                                           const Tensor& k, const Tensor& v,
                                           const nn::AttentionMask& mask) {
  const bool self = q.impl() == k.impl() && k.impl() == v.impl();  // stays self-attention
  const Tensor w = randn({q.size(0), q.size(1), mha.options.embed_dim()});
  std::set<std::string> ops;
  auto run = [&](bool need_weights, std::vector<Tensor>& grads) {
    Tensor qi = q.detach().requires_grad_(), ki = self ? qi : k.detach().requires_grad_();
    Tensor vi = k.impl() == v.impl() ? ki : v.detach().requires_grad_();  // one memory stays one
    mha.zero_grad();
    auto out = mha.forward(qi, ki, vi, mask, {}, need_weights);
    CHECK(out.weights.defined() == need_weights);
    if (!need_weights) ops = ops_behind(out.output);
    sum(out.output * w).backward();
    grads = {qi.grad(), ki.grad(), vi.grad()};
    for (auto& [name, p] : mha.named_parameters()) grads.push_back(p.grad());
    return out.output.detach();
  };
  std::vector<Tensor> g_composed, g_flash;
  const Tensor y_composed = run(true, g_composed);
  const Tensor y_flash = run(false, g_flash);
  CHECK(allclose(y_flash, y_composed, 1e-5, 1e-6));
  REQUIRE(g_flash.size() == g_composed.size());
  for (size_t i = 0; i < g_flash.size(); ++i) {
    CAPTURE(i);
    REQUIRE(g_flash[i].defined());
    CHECK(allclose(g_flash[i], g_composed[i], 1e-4, 1e-5));
  }
  return ops;
}

}  // namespace

TEST_CASE("MultiheadAttention: need_weights=false takes the flash kernel and gives the same output and gradients") {
  manual_seed(11);
  auto mha = nn::MultiheadAttention(nn::MultiheadAttentionOptions(16, 4));
  {
    NoGradGuard g;
    mha->in_proj_bias.copy_(randn(mha->in_proj_bias.shape()));  // torch's zeros test nothing
  }
  const Tensor x = randn({2, 9, 16});
  Tensor pad = ones({2, 9});
  for (int j = 6; j < 9; ++j) pad.data()[9 + j] = 0;  // second sequence has 6 real tokens
  const nn::AttentionMask mask = nn::AttentionMask().key_padding(pad).causal();

  SUBCASE("self-attention: one GEMM over the packed weight, no head copies") {
    for (const nn::AttentionMask& m : {nn::AttentionMask(), mask}) {
      const std::set<std::string> ops = fast_equals_composed(*mha, x, x, x, m);
      CHECK(ops.count("flash_attention_packed") == 1);
      for (const char* copy : {"narrow", "permute", "transpose", "slice", "cat"})
        CHECK_MESSAGE(ops.count(copy) == 0, copy, " in the self-attention fast path");
    }
  }
  SUBCASE("cross-attention: Tq != Tk, heads still read in place") {
    const Tensor mem = randn({2, 5, 16});
    Tensor mem_pad = ones({2, 5});
    mem_pad.data()[9] = 0;
    const std::set<std::string> ops =
        fast_equals_composed(*mha, x, mem, mem, nn::AttentionMask().key_padding(mem_pad));
    CHECK(ops.count("flash_attention_packed") == 1);  // q, then [K | V] in one GEMM
    CHECK(ops.count("permute") == 0);
    const std::set<std::string> ops_kv =
        fast_equals_composed(*mha, x, mem, randn({2, 5, 16}), nn::AttentionMask().causal());
    CHECK(ops_kv.count("flash_attention_heads") == 1);  // key and value differ: three GEMMs
    CHECK(ops_kv.count("permute") == 0);
  }
  SUBCASE("kdim / vdim and separate head widths d_k != d_v") {
    auto sep = nn::MultiheadAttention(
        nn::MultiheadAttentionOptions(16, 4).kdim(6).vdim(10).head_dim_k(3).head_dim_v(5));
    fast_equals_composed(*sep, x, randn({2, 7, 6}), randn({2, 7, 10}), nn::AttentionMask().causal());
    auto own = nn::MultiheadAttention(
        nn::MultiheadAttentionOptions(12, 3).head_dim_k(2).head_dim_v(6));
    const Tensor x12 = randn({2, 9, 12});
    CHECK(ops_behind(own->forward(x12, x12, x12, mask, {}, false).output)
              .count("flash_attention_heads") == 1);  // not packed: separate weights
    fast_equals_composed(*own, x12, x12, x12, mask);
  }
}
