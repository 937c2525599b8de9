// gradcheck_positional.cpp - finite-difference checks (double build) of every differentiable
// piece of the position encodings: the rotary op and its twin, the relative-position bucket
// ops, Shaw's key and value terms, RelativeSelfAttention (inputs and tables, with padding,
// causal and fully masked rows), and the learned and sinusoidal modules.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/attention/relative_position_terms.h>
#include <heed/autograd/ops/attention/relative_position.h>
#include <heed/autograd/ops/attention/rope.h>
#include <heed/layers/attention/absolute_position.h>
#include <heed/layers/attention/positional.h>
#include <heed/layers/attention/relative_position.h>
#include <heed/layers/attention/rope.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

TEST_CASE("gradcheck positional: rotary op, interleaved and half-split, with an offset") {
  manual_seed(31);
  for (bool half : {false, true}) {
    CAPTURE(half);
    const RotaryTable t = rotary_table(12, 6, 10000, 0, half);
    check_grad([t](const V& v) { return rotary(v[0], t, 5); }, {param({2, 3, 4, 6})});  // (B, H, T, D)
    check_grad([t](const V& v) { return rotary(v[0], t); }, {param({2, 7, 6})});         // (B, T, D)
    check_grad([t](const V& v) { return rotary_reference(v[0], t, 2); }, {param({2, 4, 6})});
  }
  check_grad([](const V& v) { return nn::apply_rotary(v[0], 1000, 500); }, {param({1, 3, 8})});
  nn::RotaryEmbedding rope(4);
  check_grad([&rope](const V& v) { return rope->forward(v[0], 3); }, {param({2, 2, 3, 4})});
}

TEST_CASE("gradcheck positional: gather_buckets and scatter_buckets, and they are adjoint") {
  manual_seed(32);
  for (Shape s : {Shape{4, 4, 1}, Shape{4, 4, 9}, Shape{2, 5, 2}, Shape{5, 2, 3}, Shape{1, 1, 0}}) {
    CAPTURE(s);
    const RelativeBuckets b = relative_buckets(s[0], s[1], s[2]);
    const Tensor p = param({2, b.Tq, b.count()}), a = param({2, b.Tq, b.Tk});
    check_grad([b](const V& v) { return gather_buckets(v[0], b); }, {p});
    check_grad([b](const V& v) { return scatter_buckets(v[0], b); }, {a});
    // <gather(p), a> = <p, scatter(a)>: each is the other's transpose
    CHECK(sum(gather_buckets(p, b) * a).item() ==
          doctest::Approx(sum(p * scatter_buckets(a, b)).item()).epsilon(1e-12));
  }
}

TEST_CASE("gradcheck positional: Shaw's key and value terms wrt q, alpha and both tables") {
  manual_seed(33);
  for (Shape s : {Shape{4, 4, 2}, Shape{3, 6, 1}, Shape{5, 3, 7}}) {
    CAPTURE(s);
    const int64_t Tq = s[0], Tk = s[1], k = s[2];
    const Tensor q = param({2, 2, Tq, 3}), wk = param({2 * k + 1, 3});
    const Tensor alpha = param({2, 2, Tq, Tk}), wv = param({2 * k + 1, 3});
    check_grad([Tk](const V& v) { return nn::relative_key_bias(v[0], v[1], Tk, 0.7); }, {q, wk});
    check_grad([](const V& v) { return nn::relative_value_context(v[0], v[1]); }, {alpha, wv});
    check_grad([Tk](const V& v) { return nn::relative_key_bias_reference(v[0], v[1], Tk, 0.7); }, {q, wk});
    check_grad([](const V& v) { return nn::relative_value_context_reference(v[0], v[1]); }, {alpha, wv});
  }
}

TEST_CASE("gradcheck positional: RelativeSelfAttention wrt x, tables and projections, masked") {
  manual_seed(34);
  nn::RelativeSelfAttention attn(nn::RelativeSelfAttentionOptions(6, 2, 2));
  const Tensor x = param({2, 5, 6});
  const Tensor pad = from_vector({1, 1, 1, 1, 0, 0, 0, 0, 0, 0}, {2, 5});  // batch 1 fully masked
  const std::vector<nn::AttentionMask> masks = {nn::AttentionMask(), nn::AttentionMask().causal(),
                                                nn::AttentionMask().key_padding(pad).causal()};
  for (size_t m = 0; m < masks.size(); ++m) {
    CAPTURE(m);
    const nn::AttentionMask mask = masks[m];
    check_grad([&attn, mask](const V& v) { return attn->forward(v[0], mask).output; },
               {x, attn->relative->key_table, attn->relative->value_table});
  }
  check_grad([&attn](const V& v) { return attn->forward(v[0], nn::AttentionMask(), false).weights; },
             {x, attn->relative->key_table, attn->q_proj->weight});
  check_grad([&attn, x](const V&) { return attn->forward(x).output; },
             {attn->k_proj->weight, attn->v_proj->bias, attn->out_proj->weight});

  nn::RelativeSelfAttention one(nn::RelativeSelfAttentionOptions(4, 1, 10).bias(false));  // k > T
  check_grad([&one](const V& v) { return one->forward(v[0]).output; },
             {param({1, 4, 4}), one->relative->key_table, one->relative->value_table});
}

TEST_CASE("gradcheck positional: learned and sinusoidal modules wrt x and the table") {
  manual_seed(35);
  nn::LearnedPositionalEmbedding pos(8, 3);
  check_grad([&pos](const V& v) { return pos->forward(v[0], 2) * v[0]; }, {param({2, 4, 3}), pos->weight});
  nn::SinusoidalPositionalEncoding pe(3, 8);
  check_grad([&pe](const V& v) { return pe->forward(v[0], 1) * v[0]; }, {param({2, 4, 3})});
}
