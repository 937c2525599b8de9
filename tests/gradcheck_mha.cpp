// gradcheck_mha.cpp - finite-difference checks (double build) of nn::SelfAttention and
// nn::MultiheadAttention on tiny shapes: w.r.t. the inputs and every parameter, through
// the output and the attention weights together. Self- and cross-attention, key padding
// (with a batch element that sees nothing), causal (Tq == Tk and Tq > Tk), per-head
// weights, separate d_k / d_v and kdim / vdim, no bias, and dropout with a fixed seed;
// and the flash path (need_weights = false), packed self-attention and cross-attention.
#include <heed/core/random.h>
#include <heed/autograd/ops/attention/attend.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/module.h>
#include <heed/layers/attention/multihead_attention.h>
#include <heed/layers/attention/self_attention.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

Tensor both(const Tensor& out, const Tensor& weights) { return cat({flatten(out), flatten(weights)}); }

// The inputs followed by every parameter of m (gradcheck perturbs them in place).
V with_params(V inputs, const nn::Module& m) {
  for (const Tensor& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

// Random biases (torch initialises them to 0, which would leave their forward role untested).
void randomise_biases(nn::MultiheadAttentionImpl& mha) {
  NoGradGuard g;
  if (mha.in_proj_bias.defined()) mha.in_proj_bias.copy_(randn(mha.in_proj_bias.shape()));
  if (mha.out_proj->bias.defined()) mha.out_proj->bias.copy_(randn(mha.out_proj->bias.shape()));
}

// mha(q, k, v, m, bias) -> output and weights, as one flat tensor, checked w.r.t. all of
// them (and the bias, when one is given).
void check_mha(const nn::MultiheadAttention& mha, const Tensor& q, const Tensor& k,
               const Tensor& v, const nn::AttentionMask& m, bool average = true,
               const Tensor& bias = Tensor()) {
  const int with_bias = bias.defined();
  check_grad([mha, m, average, with_bias](const V& x) {
    const Tensor b = with_bias ? x[3] : Tensor();
    const nn::AttentionOutput o = mha->forward(x[0], x[1], x[2], m, b, true, average);
    return both(o.output, o.weights);
  }, with_params(with_bias ? V{q, k, v, bias} : V{q, k, v}, *mha));
}

}  // namespace

TEST_CASE("gradcheck SelfAttention: plain, causal with key padding, d_k != d_v, no bias") {
  manual_seed(701);
  Tensor x = param({2, 3, 4});
  Tensor pad = ones({2, 3});
  pad.data()[5] = 0;
  for (auto opts : {nn::SelfAttentionOptions(4), nn::SelfAttentionOptions(4).d_k(3).d_v(2),
                    nn::SelfAttentionOptions(4).d_k(2).bias(false)}) {
    auto attn = nn::SelfAttention(opts);
    for (const nn::AttentionMask& m : {nn::AttentionMask(), nn::AttentionMask().causal().key_padding(pad)}) {
      check_grad([attn, m](const V& v) {
        const nn::Attended a = attn->forward(v[0], m);
        return both(a.context, a.weights);
      }, with_params({x}, *attn));
    }
  }
}

TEST_CASE("gradcheck MultiheadAttention: self-attention, packed in_proj, with and without masks") {
  manual_seed(702);
  auto mha = nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2));
  randomise_biases(*mha);
  Tensor x = param({2, 3, 4});
  Tensor pad = ones({2, 3});
  pad.data()[2] = 0;
  check_mha(mha, x, x, x, {});
  check_mha(mha, x, x, x, nn::AttentionMask().key_padding(pad));
  check_mha(mha, x, x, x, nn::AttentionMask().causal());
  check_mha(mha, x, x, x, nn::AttentionMask().causal().key_padding(pad), /*average=*/false);
}

TEST_CASE("gradcheck MultiheadAttention: a batch element whose keys are all padding") {
  manual_seed(703);
  auto mha = nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2));
  randomise_biases(*mha);
  Tensor x = param({2, 3, 4});
  Tensor pad = ones({2, 3});
  for (int j = 0; j < 3; ++j) pad.data()[3 + j] = 0;
  check_mha(mha, x, x, x, nn::AttentionMask().key_padding(pad), false);
}

TEST_CASE("gradcheck MultiheadAttention: cross-attention, Tq != Tk, causal with Tq > Tk") {
  manual_seed(704);
  auto mha = nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2));
  randomise_biases(*mha);
  Tensor q = param({2, 4, 4}), mem = param({2, 2, 4});
  Tensor pad = ones({2, 2});
  pad.data()[3] = 0;
  check_mha(mha, q, mem, mem, nn::AttentionMask().key_padding(pad));
  check_mha(mha, q, mem, mem, nn::AttentionMask().causal());  // queries 0, 1 see nothing
  Tensor q2 = param({2, 2, 4}), mem2 = param({2, 5, 4});
  check_mha(mha, q2, mem2, mem2, nn::AttentionMask().causal(), false);
}

TEST_CASE("gradcheck MultiheadAttention: kdim/vdim, separate d_k/d_v, no bias") {
  manual_seed(705);
  auto kv = nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2).kdim(3).vdim(5));
  randomise_biases(*kv);
  Tensor q = param({2, 2, 4}), k = param({2, 3, 3}), v = param({2, 3, 5});
  check_mha(kv, q, k, v, nn::AttentionMask().causal());

  auto heads = nn::MultiheadAttention(
      nn::MultiheadAttentionOptions(5, 2).head_dim_k(3).head_dim_v(2));
  randomise_biases(*heads);
  Tensor x = param({2, 3, 5});
  check_mha(heads, x, x, x, nn::AttentionMask().causal(), false);

  auto nb = nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2).bias(false));
  Tensor mem = param({2, 3, 4});
  check_mha(nb, q, mem, mem, {});
}

TEST_CASE("gradcheck MultiheadAttention: dropout on the weights, the seed set inside the function") {
  manual_seed(706);
  auto mha = nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2).dropout(0.3));
  randomise_biases(*mha);
  Tensor x = param({2, 3, 4});
  check_grad([mha](const V& v) {
    manual_seed(81);  // every evaluation drops the same weights
    const nn::AttentionOutput o = mha->forward(v[0], v[0], v[0], nn::AttentionMask().causal(), {}, true, false);
    return both(o.output, o.weights);
  }, with_params({x}, *mha));
}

TEST_CASE("gradcheck MultiheadAttention with attn_bias: w.r.t. inputs, parameters and the bias") {
  manual_seed(709);
  auto mha = nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2));
  randomise_biases(*mha);
  Tensor q = param({2, 3, 4}), kv = param({2, 4, 4});
  const nn::AttentionMask m = nn::AttentionMask().key_padding(from_vector({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4}));
  check_mha(mha, q, kv, kv, m, false, param({3, 4}));  // (Tq, Tk), shared by every batch and head
  // (B, H, Tq, Tk), one per batch element and head; output only (the composed path that
  // need_weights = false takes when a bias is given)
  check_grad([mha, m](const V& x) {
    return flatten(mha->forward(x[0], x[1], x[1], m, x[2], /*need_weights=*/false).output);
  }, with_params({q, kv, param({2, 2, 3, 4})}, *mha));
}

TEST_CASE("gradcheck MultiheadAttention, need_weights = false: heads read in place by the flash kernel") {
  manual_seed(710);
  auto mha = nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2));
  randomise_biases(*mha);
  Tensor x = param({2, 3, 4}), mem = param({2, 4, 4});
  Tensor pad = ones({2, 3});
  pad.data()[5] = 0;
  // self-attention: one GEMM over in_proj_weight, Q K V read from its (B, T, 3E) output
  for (const nn::AttentionMask& m : {nn::AttentionMask(), nn::AttentionMask().causal().key_padding(pad)})
    check_grad([mha, m](const V& v) {
      return flatten(mha->forward(v[0], v[0], v[0], m, {}, /*need_weights=*/false).output);
    }, with_params({x}, *mha));
  // cross-attention, Tq != Tk, key = value: a GEMM for Q and one for [K | V]
  check_grad([mha](const V& v) {
    return flatten(mha->forward(v[0], v[1], v[1], nn::AttentionMask().causal(), {}, false).output);
  }, with_params({x, mem}, *mha));
  // cross-attention, key != value: a GEMM each, heads side by side
  check_grad([mha](const V& v) {
    return flatten(mha->forward(v[0], v[1], v[2], {}, {}, false).output);
  }, with_params({x, mem, param({2, 4, 4})}, *mha));
  // separate weights, d_k != d_v, kdim / vdim of their own
  auto sep = nn::MultiheadAttention(
      nn::MultiheadAttentionOptions(4, 2).kdim(3).vdim(5).head_dim_k(3).head_dim_v(2));
  randomise_biases(*sep);
  check_grad([sep](const V& v) {
    return flatten(sep->forward(v[0], v[1], v[2], {}, {}, false).output);
  }, with_params({x, param({2, 4, 3}), param({2, 4, 5})}, *sep));
}
