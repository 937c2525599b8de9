// test_golden_attention.cpp - heed's attention against PyTorch (tests/golden/attention.bin).
//
// Each case (made by tests/golden/gen_attention.py, which shows the torch code) stores the
// inputs, for nn.MultiheadAttention every parameter under torch's name, masks in heed's
// convention (1 = may attend; the generator converts them for torch), torch's float64
// output and attention weights, upstream gradients dy and dweights, and the gradients of
// sum(out * dy) + sum(weights * dweights) w.r.t. every input and parameter. The test loads
// the parameters into the heed module BY NAME (named_parameters() = torch's state_dict
// keys), runs forward and backward in float32 and compares everything (rule:
// tests/golden/golden.h, rtol 1e-5, atol 1e-6 x scale).
#include <algorithm>
#include <functional>
#include <utility>

#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attend.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/attention/scaled_dot_product.h>
#include <heed/layers/module.h>
#include <heed/layers/attention/multihead_attention.h>
#include "golden/golden.h"
#include "helpers.h"

using namespace heed;

namespace {

const golden::File& attention() {
  static const golden::File f("tests/golden/attention.bin");
  return f;
}

using V = std::vector<Tensor>;
using Fn = std::function<std::pair<Tensor, Tensor>(const V&)>;  // inputs -> (out, weights)

void report(const golden::Check& c) { CHECK_MESSAGE(c.ok, c.message); }

// Runs case c: the arrays named in `inputs` become leaves that require grad, those in
// `masks` constants; `m` (if any) gets every parameter from the array of the same name.
// Then fn, backward of sum(out * dy) + sum(weights * dweights), and every comparison.
// Fails when the case holds an array this does not look at.
void run(const std::string& c, const std::vector<std::string>& inputs,
         const std::vector<std::string>& masks, nn::Module* m, const Fn& fn) {
  const golden::File& f = attention();
  std::vector<std::string> seen = {"out", "weights", "dy", "dweights"};
  V leaves;
  for (const std::string& in : inputs) {
    leaves.push_back(f.tensor(c, in).requires_grad_());
    seen.insert(seen.end(), {in, "grad_" + in});
  }
  for (const std::string& mk : masks) {
    leaves.push_back(f.tensor(c, mk));
    seen.push_back(mk);
  }
  if (m) {
    NoGradGuard ng;
    for (auto& [name, p] : m->named_parameters()) {
      REQUIRE_MESSAGE(f.has(c, name), c, " has no parameter ", name);
      REQUIRE(p.shape() == f.array(c, name).shape);
      p.copy_(f.tensor(c, name));
      seen.insert(seen.end(), {name, "grad_" + name});
    }
  }
  for (const std::string& a : f.arrays(c))
    REQUIRE_MESSAGE(std::find(seen.begin(), seen.end(), a) != seen.end(), c, " array ", a, " unchecked");

  const auto [out, weights] = fn(leaves);
  report(golden::compare(out, f.array(c, "out"), c + " out"));
  report(golden::compare(weights, f.array(c, "weights"), c + " weights"));
  if (out.shape() != f.array(c, "out").shape || weights.shape() != f.array(c, "weights").shape) return;
  (sum(out * f.tensor(c, "dy")) + sum(weights * f.tensor(c, "dweights"))).backward();
  for (size_t i = 0; i < inputs.size(); ++i)
    report(golden::compare(leaves[i].grad(), f.array(c, "grad_" + inputs[i]), c + " grad_" + inputs[i]));
  if (m)
    for (auto& [name, p] : m->named_parameters())
      report(golden::compare(p.grad(), f.array(c, "grad_" + name), c + " grad of " + name));
}

std::pair<Tensor, Tensor> pair_of(const nn::Attended& a) { return {a.context, a.weights}; }
std::pair<Tensor, Tensor> pair_of(const nn::AttentionOutput& a) { return {a.output, a.weights}; }

}  // namespace

TEST_CASE("golden attention: scaled dot-product, (B, Tq, D) with key padding") {
  run("sdpa_padding", {"q", "k", "v"}, {"key_padding"}, nullptr, [](const V& x) {
    return pair_of(nn::scaled_dot_product_attention(x[0], x[1], x[2],
                                                    nn::AttentionMask().key_padding(x[3])));
  });
}

TEST_CASE("golden attention: scaled dot-product, (B, H, Tq, D), causal Tq < Tk, padding, scale") {
  run("sdpa_causal_heads", {"q", "k", "v"}, {"key_padding"}, nullptr, [](const V& x) {
    return pair_of(nn::scaled_dot_product_attention(
        x[0], x[1], x[2], nn::AttentionMask().key_padding(x[3]).causal(), {}, 0, false, 0.7));
  });
}

TEST_CASE("golden attention: nn.MultiheadAttention(8, 2) self-attention with key padding") {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  run("mha_self_padding", {"x"}, {"key_padding"}, mha.get(), [&mha](const V& x) {
    return pair_of(mha->forward(x[0], x[0], x[0], nn::AttentionMask().key_padding(x[1])));
  });
}

TEST_CASE("golden attention: nn.MultiheadAttention(8, 2) causal + key padding, weights per head") {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  run("mha_self_causal", {"x"}, {"key_padding"}, mha.get(), [&mha](const V& x) {
    return pair_of(mha->forward(x[0], x[0], x[0], nn::AttentionMask().key_padding(x[1]).causal(),
                               {}, true, /*average_attn_weights=*/false));
  });
}

TEST_CASE("golden attention: nn.MultiheadAttention(8, 4) cross-attention, Tq 3 != Tk 6, padding") {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 4));
  run("mha_cross", {"query", "memory"}, {"key_padding"}, mha.get(), [&mha](const V& x) {
    return pair_of(mha->forward(x[0], x[1], x[1], nn::AttentionMask().key_padding(x[2])));
  });
}

TEST_CASE("golden attention: nn.MultiheadAttention(8, 2, kdim=5, vdim=7): q/k/v_proj_weight") {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(7));
  run("mha_cross_kdim_vdim", {"query", "key", "value"}, {}, mha.get(),
      [&mha](const V& x) { return pair_of(mha->forward(x[0], x[1], x[2])); });
}

TEST_CASE("golden attention: nn.MultiheadAttention(6, 3, bias=False) cross-attention") {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(6, 3).bias(false));
  run("mha_cross_nobias", {"query", "memory"}, {}, mha.get(),
      [&mha](const V& x) { return pair_of(mha->forward(x[0], x[1], x[1])); });
}

// attn_bias is torch's float attn_mask (gen_attention.py adds it to the scores by hand for
// scaled dot-product attention, and passes it to nn.MultiheadAttention as attn_mask).
TEST_CASE("golden attention: scaled dot-product with attn_bias (H, Tq, Tk), causal, padding") {
  run("sdpa_bias_heads", {"q", "k", "v", "bias"}, {"key_padding"}, nullptr, [](const V& x) {
    return pair_of(nn::scaled_dot_product_attention(
        x[0], x[1], x[2], nn::AttentionMask().key_padding(x[4]).causal(), x[3]));
  });
}

TEST_CASE("golden attention: nn.MultiheadAttention(8, 2) with a float attn_mask (Tq, Tk) as attn_bias") {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  run("mha_self_bias", {"x", "bias"}, {"key_padding"}, mha.get(), [&mha](const V& x) {
    return pair_of(mha->forward(x[0], x[0], x[0], nn::AttentionMask().key_padding(x[2]), x[1], true,
                               /*average_attn_weights=*/false));
  });
}

TEST_CASE("golden attention: nn.MultiheadAttention(8, 2) cross, attn_bias (B, H, Tq, Tk) = torch's (B*H, Tq, Tk)") {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  run("mha_cross_bias_per_head", {"query", "memory", "bias"}, {}, mha.get(), [&mha](const V& x) {
    return pair_of(mha->forward(x[0], x[1], x[1], {}, x[2], true, /*average_attn_weights=*/false));
  });
}
