// test_transformer.cpp - the Transformer layers' behaviour (float build): parameter names
// are torch's state_dict keys, defaults are torch's, eval() turns dropout off, padding and
// causal masks hide what they say, stacks equal their layers applied by hand, errors.
// Outputs and gradients against PyTorch: test_golden_transformer.cpp.
#include <string>
#include <utility>
#include <vector>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/feed_forward.h>
#include <heed/layers/module.h>
#include <heed/layers/transformer.h>
#include <heed/layers/transformer_decoder.h>
#include <heed/layers/transformer_encoder.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;

namespace {

using NameShapes = std::vector<std::pair<std::string, Shape>>;

// The keys and shapes of torch's state_dict, E=4, H=2, F=6, copied from
//   torch.nn.TransformerEncoderLayer(4, 2, 6).state_dict() / TransformerDecoderLayer(4, 2, 6)
const NameShapes kEncoderLayer = {
    {"self_attn.in_proj_weight", {12, 4}}, {"self_attn.in_proj_bias", {12}},
    {"self_attn.out_proj.weight", {4, 4}}, {"self_attn.out_proj.bias", {4}},
    {"linear1.weight", {6, 4}},            {"linear1.bias", {6}},
    {"linear2.weight", {4, 6}},            {"linear2.bias", {4}},
    {"norm1.weight", {4}},                 {"norm1.bias", {4}},
    {"norm2.weight", {4}},                 {"norm2.bias", {4}}};
const NameShapes kDecoderLayer = {
    {"self_attn.in_proj_weight", {12, 4}},      {"self_attn.in_proj_bias", {12}},
    {"self_attn.out_proj.weight", {4, 4}},      {"self_attn.out_proj.bias", {4}},
    {"multihead_attn.in_proj_weight", {12, 4}}, {"multihead_attn.in_proj_bias", {12}},
    {"multihead_attn.out_proj.weight", {4, 4}}, {"multihead_attn.out_proj.bias", {4}},
    {"linear1.weight", {6, 4}},                 {"linear1.bias", {6}},
    {"linear2.weight", {4, 6}},                 {"linear2.bias", {4}},
    {"norm1.weight", {4}},                      {"norm1.bias", {4}},
    {"norm2.weight", {4}},                      {"norm2.bias", {4}},
    {"norm3.weight", {4}},                      {"norm3.bias", {4}}};

void check_names(const nn::Module& m, const NameShapes& want) {
  const nn::NamedTensors got = m.named_parameters();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(got[i].first == want[i].first);
    CHECK(got[i].second.shape() == want[i].second);
  }
}

// `prefix` + every name of `layer`
NameShapes prefixed(const std::string& prefix, const NameShapes& layer) {
  NameShapes out;
  for (auto& [n, s] : layer) out.emplace_back(prefix + n, s);
  return out;
}

// Copy every parameter of `from` into `to` (same names, same shapes).
void copy_parameters(const nn::Module& from, const nn::Module& to) {
  NoGradGuard ng;
  const nn::NamedTensors a = from.named_parameters(), b = to.named_parameters();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].first == b[i].first);
    Tensor t = b[i].second;
    t.copy_(a[i].second);
  }
}

nn::TransformerLayerOptions tiny() { return nn::TransformerLayerOptions(4, 2).dim_feedforward(6); }

}  // namespace

TEST_CASE("transformer options: torch's defaults, and repr") {
  const nn::TransformerEncoderLayerOptions o(512, 8);
  CHECK(o.dim_feedforward() == 2048);
  CHECK(o.dropout() == doctest::Approx(0.1));
  CHECK(o.activation() == "relu");
  CHECK(o.layer_norm_eps() == doctest::Approx(1e-5));
  CHECK(!o.norm_first());
  CHECK(nn::TransformerEncoderLayer(tiny())->repr() ==
        "TransformerEncoderLayer(d_model=4, nhead=2, dim_feedforward=6, dropout=0.1, "
        "activation='relu', layer_norm_eps=1e-05, norm_first=False)");
  CHECK(nn::TransformerDecoderLayer(tiny().norm_first(true).activation("gelu"))->repr() ==
        "TransformerDecoderLayer(d_model=4, nhead=2, dim_feedforward=6, dropout=0.1, "
        "activation='gelu', layer_norm_eps=1e-05, norm_first=True)");
  CHECK(nn::TransformerEncoder(nn::TransformerEncoderOptions(tiny(), 2))->repr() ==
        "TransformerEncoder(num_layers=2, norm=False)");
  CHECK(nn::PositionwiseFeedForward(nn::FeedForwardOptions(4, 6))->repr() ==
        "PositionwiseFeedForward(d_model=4, dim_feedforward=6, dropout=0.1, activation='relu')");
}

TEST_CASE("transformer layers: parameter names and shapes are torch's state_dict keys, in order") {
  check_names(*nn::TransformerEncoderLayer(tiny()), kEncoderLayer);
  check_names(*nn::TransformerEncoderLayer(tiny().norm_first(true)), kEncoderLayer);
  check_names(*nn::TransformerDecoderLayer(tiny()), kDecoderLayer);

  NameShapes enc = prefixed("layers.0.", kEncoderLayer), enc1 = prefixed("layers.1.", kEncoderLayer);
  enc.insert(enc.end(), enc1.begin(), enc1.end());
  check_names(*nn::TransformerEncoder(nn::TransformerEncoderOptions(tiny(), 2)), enc);
  enc.push_back({"norm.weight", {4}});
  enc.push_back({"norm.bias", {4}});
  check_names(*nn::TransformerEncoder(nn::TransformerEncoderOptions(tiny(), 2).norm(true)), enc);

  NameShapes dec = prefixed("layers.0.", kDecoderLayer);
  dec.push_back({"norm.weight", {4}});
  dec.push_back({"norm.bias", {4}});
  check_names(*nn::TransformerDecoder(nn::TransformerDecoderOptions(tiny(), 1).norm(true)), dec);

  check_names(*nn::PositionwiseFeedForward(nn::FeedForwardOptions(4, 6)),
              {{"linear1.weight", {6, 4}}, {"linear1.bias", {6}}, {"linear2.weight", {4, 6}}, {"linear2.bias", {4}}});
}

TEST_CASE("transformer layers: parameter counts 4E^2 + 2EF + 9E + F and 8E^2 + 2EF + 15E + F") {
  // torch: sum(p.numel() for p in TransformerEncoderLayer(512, 8).parameters()) == 3152384
  CHECK(nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(512, 8))->num_parameters() == 3152384);
  CHECK(nn::TransformerDecoderLayer(nn::TransformerDecoderLayerOptions(512, 8))->num_parameters() == 4204032);
  CHECK(nn::TransformerEncoderLayer(tiny())->num_parameters() == 4 * 16 + 2 * 24 + 9 * 4 + 6);
  CHECK(nn::TransformerDecoderLayer(tiny())->num_parameters() == 8 * 16 + 2 * 24 + 15 * 4 + 6);
}

TEST_CASE("transformer layers: eval() disables every dropout; training with dropout is random") {
  manual_seed(1);
  nn::TransformerEncoderLayer enc(tiny().dropout(0.5));
  nn::TransformerEncoderLayer enc0(tiny().dropout(0));
  copy_parameters(*enc, *enc0);
  const Tensor x = randn({2, 3, 4});
  CHECK(!allclose(enc->forward(x), enc->forward(x)));  // training: fresh masks each call
  enc->eval();
  const Tensor y = enc->forward(x);
  CHECK(allclose(y, enc->forward(x), 0, 0));          // eval: deterministic
  CHECK(allclose(y, enc0->forward(x), 0, 0));         // ... and equal to dropout 0

  nn::TransformerDecoderLayer dec(tiny().dropout(0.5).norm_first(true));
  nn::TransformerDecoderLayer dec0(tiny().dropout(0).norm_first(true));
  copy_parameters(*dec, *dec0);
  const Tensor m = randn({2, 5, 4});
  CHECK(!allclose(dec->forward(x, m), dec->forward(x, m)));
  dec->eval();
  CHECK(allclose(dec->forward(x, m), dec0->forward(x, m), 0, 0));
}

TEST_CASE("feed-forward: linear2(act(linear1(x))), relu and gelu; the layers use the same FFN") {
  manual_seed(2);
  const Tensor x = randn({2, 3, 4});
  for (const std::string act : {"relu", "gelu"}) {
    CAPTURE(act);
    nn::PositionwiseFeedForward ff(nn::FeedForwardOptions(4, 6).activation(act).dropout(0.3));
    ff->eval();
    const Tensor h = ff->linear1->forward(x);
    const Tensor want = ff->linear2->forward(act == "relu" ? relu(h) : gelu(h));
    CHECK(allclose(ff->forward(x), want, 0, 0));
  }
  // pre-norm without attention: zero the attention's output projection, so that
  // layer(x) = x + FFN(norm2(x)) exactly
  nn::TransformerEncoderLayer layer(tiny().norm_first(true).dropout(0));
  {
    NoGradGuard ng;
    layer->self_attn->out_proj->weight.zero_();
    layer->self_attn->out_proj->bias.zero_();
  }
  const Tensor ffn = layer->linear2->forward(relu(layer->linear1->forward(layer->norm2->forward(x))));
  CHECK(allclose(layer->forward(x), x + ffn, 1e-6, 1e-6));
}

TEST_CASE("transformer stacks: equal their layers applied in turn, then the final norm") {
  manual_seed(3);
  nn::TransformerEncoder enc(nn::TransformerEncoderOptions(tiny().dropout(0), 3).norm(true));
  const Tensor x = randn({2, 3, 4});
  const nn::AttentionMask pad = nn::AttentionMask().key_padding(from_vector({1, 1, 1, 1, 1, 0}, {2, 3}));
  Tensor h = x;
  for (size_t i = 0; i < enc->layers->size(); ++i) h = (*enc->layers)[i].forward(h, pad);
  CHECK(allclose(enc->forward(x, pad), enc->norm->forward(h), 0, 0));
  // each layer is drawn afresh (torch deep-copies one): different initial weights
  CHECK(!allclose((*enc->layers)[0].linear1->weight, (*enc->layers)[1].linear1->weight));

  nn::TransformerDecoder dec(nn::TransformerDecoderOptions(tiny().dropout(0), 2));
  const Tensor m = randn({2, 5, 4});
  const nn::AttentionMask causal = nn::AttentionMask().causal();
  const Tensor want = (*dec->layers)[1].forward((*dec->layers)[0].forward(x, m, causal), m, causal);
  CHECK(allclose(dec->forward(x, m, causal), want, 0, 0));
  CHECK(!dec->norm);
}

TEST_CASE("transformer masks: padded positions and future targets do not change what they hide") {
  manual_seed(4);
  for (bool pre : {false, true}) {
    CAPTURE(pre);
    nn::TransformerEncoderLayer enc(tiny().dropout(0).norm_first(pre));
    // batch 1's last position is padding: changing it leaves batch 1's first two rows alone
    const Tensor pad = from_vector({1, 1, 1, 1, 1, 0}, {2, 3});
    const Tensor x = randn({2, 3, 4});
    Tensor x2 = clone(x).detach();
    for (int j = 0; j < 4; ++j) x2.data()[(1 * 3 + 2) * 4 + j] += 5;
    const Tensor y = enc->forward(x, nn::AttentionMask().key_padding(pad));
    const Tensor y2 = enc->forward(x2, nn::AttentionMask().key_padding(pad));
    CHECK(allclose(slice(y, 1, 0, 2), slice(y2, 1, 0, 2), 1e-6, 1e-6));
    CHECK(!allclose(y, y2));

    // causal: target row t depends on target rows <= t only; padded memory is ignored
    nn::TransformerDecoderLayer dec(tiny().dropout(0).norm_first(pre));
    const Tensor mem = randn({2, 5, 4});
    const Tensor mpad = from_vector({1, 1, 1, 1, 0, 1, 1, 1, 1, 1}, {2, 5});
    Tensor t2 = clone(x).detach(), mem2 = clone(mem).detach();
    for (int j = 0; j < 4; ++j) t2.data()[2 * 4 + j] += 5;    // batch 0, last target row
    for (int j = 0; j < 4; ++j) mem2.data()[4 * 4 + j] += 5;  // batch 0, padded source row
    const nn::AttentionMask causal = nn::AttentionMask().causal();
    const nn::AttentionMask mk = nn::AttentionMask().key_padding(mpad);
    const Tensor d = dec->forward(x, mem, causal, mk), d2 = dec->forward(t2, mem2, causal, mk);
    CHECK(allclose(slice(d, 1, 0, 2), slice(d2, 1, 0, 2), 1e-6, 1e-6));
    CHECK(allclose(slice(d, 0, 1, 2), slice(d2, 0, 1, 2), 0, 0));  // batch 1 untouched
  }
}

TEST_CASE("transformer errors: options, shapes and masks name the layer") {
  CHECK_THROWS_WITH_AS(nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(6, 4)),
                       doctest::Contains("divisible"), Error);
  CHECK_THROWS_WITH_AS(nn::TransformerEncoderLayer(tiny().activation("tanh")),
                       doctest::Contains("activation must be 'relu' or 'gelu'"), Error);
  CHECK_THROWS_AS(nn::TransformerDecoderLayer(tiny().dropout(1)), Error);
  CHECK_THROWS_AS(nn::TransformerDecoderLayer(tiny().dim_feedforward(0)), Error);
  CHECK_THROWS_AS(nn::TransformerEncoderLayer(tiny().layer_norm_eps(-1)), Error);
  CHECK_THROWS_WITH_AS(nn::TransformerEncoder(nn::TransformerEncoderOptions(tiny(), 0)),
                       doctest::Contains("num_layers"), Error);
  CHECK_THROWS_AS(nn::TransformerDecoder(nn::TransformerDecoderOptions(tiny(), 0)), Error);
  CHECK_THROWS_AS(nn::PositionwiseFeedForward(nn::FeedForwardOptions(4, 6).activation("elu")), Error);

  nn::TransformerEncoderLayer enc(tiny());
  CHECK_THROWS_WITH_AS(enc->forward(randn({3, 4})), doctest::Contains("TransformerEncoderLayer"), Error);
  CHECK_THROWS_WITH_AS(enc->forward(randn({2, 3, 5})), doctest::Contains("(B, T, 4)"), Error);
  CHECK_THROWS_AS(enc->forward(randn({2, 3, 4}), nn::AttentionMask().key_padding(ones({2, 4}))), Error);
  CHECK_THROWS_AS(enc->forward(randn({2, 3, 4}), nn::AttentionMask().mask(ones({4, 3}))), Error);

  nn::TransformerDecoderLayer dec(tiny());
  CHECK_THROWS_WITH_AS(dec->forward(randn({2, 3, 4}), randn({3, 5, 4})), doctest::Contains("batch"), Error);
  CHECK_THROWS_WITH_AS(dec->forward(randn({2, 3, 4}), randn({2, 5, 3})), doctest::Contains("memory"), Error);
  CHECK_THROWS_AS(dec->forward(randn({2, 3, 4}), randn({2, 5, 4}), {}, nn::AttentionMask().key_padding(ones({2, 3}))),
                  Error);
  nn::PositionwiseFeedForward ff(nn::FeedForwardOptions(4, 6));
  CHECK_THROWS_WITH_AS(ff->forward(randn({2, 5})), doctest::Contains("d_model 4"), Error);
}
