// test_golden_transformer.cpp - heed's Transformer layers and nn::Transformer against torch.nn's
// (tests/golden/transformer.bin, made by tests/golden/gen_transformer.py: batch_first=True,
// dropout=0, E=8, H=2, F=16, B=2, Ts=5, Tt=4).
//
// Each case stores every parameter under torch's state_dict key. The test first checks that
// heed's named_parameters() lists exactly those keys, in the same order, with the same shapes;
// then loads them by name, runs forward and backward(dy) in float32, and compares the output,
// the input gradients and every parameter gradient (rule: tests/golden/golden.h, rtol 1e-5,
// atol 1e-6 x scale). torch's masks (True = ignore) were converted to heed's (1 = visible)
// by the generator; the causal tgt_mask is AttentionMask::causal().
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <heed/core/elementwise.h>
#include <heed/core/random.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/layers/attention/kv_cache.h>
#include <heed/layers/attention/multihead_attention.h>
#include <heed/layers/module.h>
#include <heed/layers/transformer.h>
#include <heed/layers/transformer_decoder.h>
#include <heed/layers/transformer_encoder.h>
#include <heed/layers/transformer_model.h>
#include "golden/golden.h"
#include "helpers.h"

using namespace heed;

namespace {

const golden::File& goldens() {
  static const golden::File f("tests/golden/transformer.bin");
  return f;
}

using Inputs = std::map<std::string, Tensor>;  // input name -> leaf (requires grad)

bool is_input(const Inputs& in, const std::string& name) { return in.count(name) > 0; }

// torch's state_dict keys, in order: the differentiated arrays that are not inputs.
std::vector<std::string> torch_keys(const std::string& c, const Inputs& in) {
  std::vector<std::string> keys;
  for (const std::string& a : goldens().arrays(c))
    if (goldens().has(c, "grad_" + a) && !is_input(in, a)) keys.push_back(a);
  return keys;
}

// The case's inputs as leaves that require grad.
Inputs inputs(const std::string& c, const std::vector<std::string>& names) {
  Inputs in;
  for (const std::string& n : names) in[n] = goldens().tensor(c, n).requires_grad_();
  return in;
}

// Names (and order, and shapes) must be torch's; then copy every parameter in by name.
void load(const std::string& c, const nn::Module& m, const Inputs& in) {
  const std::vector<std::string> keys = torch_keys(c, in);
  const nn::NamedTensors params = m.named_parameters();
  std::vector<std::string> names;
  for (auto& [n, p] : params) names.push_back(n);
  REQUIRE(names == keys);
  NoGradGuard ng;
  for (auto& [n, p] : params) {
    REQUIRE(p.shape() == goldens().array(c, n).shape);
    Tensor t = p;
    t.copy_(goldens().tensor(c, n));
  }
}

// out.backward(dy); then out, each input's and each parameter's gradient against torch's.
// Fails if the case holds an array that was not looked at.
void compare_all(const std::string& c, const nn::Module& m, const Inputs& in, const Tensor& out,
                 const std::vector<std::string>& masks) {
  const golden::File& f = goldens();
  std::vector<std::string> seen = {"out", "dy"};
  seen.insert(seen.end(), masks.begin(), masks.end());
  const golden::Check co = golden::compare(out, f.array(c, "out"), c + " out");
  CHECK_MESSAGE(co.ok, co.message);
  if (out.shape() != f.array(c, "out").shape) return;
  out.backward(f.tensor(c, "dy"));
  auto check_grad = [&](const std::string& name, const Tensor& t) {
    seen.push_back(name);
    seen.push_back("grad_" + name);
    const Tensor g = t.grad().defined() ? t.grad() : zeros_like(t);
    const golden::Check cg = golden::compare(g, f.array(c, "grad_" + name), c + " grad_" + name);
    CHECK_MESSAGE(cg.ok, cg.message);
  };
  for (auto& [n, t] : in) check_grad(n, t);
  for (auto& [n, p] : m.named_parameters()) check_grad(n, p);
  for (const std::string& a : f.arrays(c))
    CHECK_MESSAGE(std::find(seen.begin(), seen.end(), a) != seen.end(), c, " array ", a, " unchecked");
}

const int64_t E = 8, H = 2, F = 16;

nn::TransformerLayerOptions options() { return nn::TransformerLayerOptions(E, H).dim_feedforward(F).dropout(0); }

nn::AttentionMask padding(const std::string& c, const std::string& name) {
  return nn::AttentionMask().key_padding(goldens().tensor(c, name));
}

}  // namespace

TEST_CASE("golden transformer: TransformerEncoderLayer, post-norm, relu, key padding") {
  const std::string c = "encoder_layer_post";
  nn::TransformerEncoderLayer layer(options());
  const Inputs in = inputs(c, {"src"});
  load(c, *layer, in);
  const Tensor y = layer->forward(in.at("src"), padding(c, "src_visible"));
  compare_all(c, *layer, in, y, {"src_visible"});
}

TEST_CASE("golden transformer: TransformerEncoderLayer, pre-norm, gelu, eps 1e-6, padding + (T,T) mask") {
  const std::string c = "encoder_layer_pre_gelu";
  nn::TransformerEncoderLayer layer(options().norm_first(true).activation("gelu").layer_norm_eps(1e-6));
  const Inputs in = inputs(c, {"src"});
  load(c, *layer, in);
  const Tensor y = layer->forward(in.at("src"),
                                 padding(c, "src_visible").mask(goldens().tensor(c, "attn_visible")));
  compare_all(c, *layer, in, y, {"src_visible", "attn_visible"});
}

TEST_CASE("golden transformer: TransformerDecoderLayer, post-norm, causal tgt, memory padding") {
  const std::string c = "decoder_layer_post";
  nn::TransformerDecoderLayer layer(options());
  const Inputs in = inputs(c, {"tgt", "memory"});
  load(c, *layer, in);
  const Tensor y = layer->forward(in.at("tgt"), in.at("memory"), nn::AttentionMask().causal(),
                                 padding(c, "memory_visible"));
  compare_all(c, *layer, in, y, {"memory_visible"});
}

TEST_CASE("golden transformer: TransformerDecoderLayer, pre-norm, gelu, causal + tgt padding, memory padding") {
  const std::string c = "decoder_layer_pre_gelu";
  nn::TransformerDecoderLayer layer(options().norm_first(true).activation("gelu"));
  const Inputs in = inputs(c, {"tgt", "memory"});
  load(c, *layer, in);
  const Tensor y = layer->forward(in.at("tgt"), in.at("memory"), padding(c, "tgt_visible").causal(),
                                 padding(c, "memory_visible"));
  compare_all(c, *layer, in, y, {"memory_visible", "tgt_visible"});
}

TEST_CASE("golden transformer: TransformerEncoder, 2 post-norm layers + final norm, key padding") {
  const std::string c = "encoder_stack";
  nn::TransformerEncoder enc(nn::TransformerEncoderOptions(options(), 2).norm(true));
  const Inputs in = inputs(c, {"src"});
  load(c, *enc, in);
  const Tensor y = enc->forward(in.at("src"), padding(c, "src_visible"));
  compare_all(c, *enc, in, y, {"src_visible"});
}

TEST_CASE("golden transformer: TransformerEncoder with torch's float src_mask as attn_bias") {
  const std::string c = "encoder_stack_float_mask";
  nn::TransformerEncoder enc(nn::TransformerEncoderOptions(options(), 2));
  const Inputs in = inputs(c, {"src"});
  load(c, *enc, in);
  const Tensor bias = goldens().tensor(c, "src_bias");  // (T, T), -inf hides a key
  const Tensor y = enc(in.at("src"), nn::AttentionMask(), bias);
  compare_all(c, *enc, in, y, {"src_bias"});
}

TEST_CASE("golden transformer: TransformerDecoder, 2 pre-norm layers + final norm") {
  const std::string c = "decoder_stack";
  nn::TransformerDecoder dec(nn::TransformerDecoderOptions(options().norm_first(true), 2).norm(true));
  const Inputs in = inputs(c, {"tgt", "memory"});
  load(c, *dec, in);
  const Tensor y = dec->forward(in.at("tgt"), in.at("memory"), nn::AttentionMask().causal(),
                               padding(c, "memory_visible"));
  compare_all(c, *dec, in, y, {"memory_visible"});
}

TEST_CASE("golden transformer: Transformer, 2 + 2 post-norm layers, src/tgt/memory padding, causal tgt") {
  const std::string c = "transformer_post";
  nn::Transformer model(nn::TransformerOptions(E, H).num_encoder_layers(2).num_decoder_layers(2)
                            .dim_feedforward(F).dropout(0));
  const Inputs in = inputs(c, {"src", "tgt"});
  load(c, *model, in);
  const Tensor y = model->forward(in.at("src"), in.at("tgt"), padding(c, "src_visible"),
                                 padding(c, "tgt_visible").causal(), padding(c, "memory_visible"));
  compare_all(c, *model, in, y, {"src_visible", "tgt_visible", "memory_visible"});
}

TEST_CASE("golden transformer: Transformer, 1 + 2 pre-norm gelu layers, eps 1e-6, the subsequent mask as a tensor") {
  const std::string c = "transformer_pre_gelu";
  nn::Transformer model(nn::TransformerOptions(E, H).num_encoder_layers(1).num_decoder_layers(2).dim_feedforward(F)
                            .dropout(0).activation("gelu").layer_norm_eps(1e-6).norm_first(true));
  const Inputs in = inputs(c, {"src", "tgt"});
  load(c, *model, in);
  const int64_t T = in.at("tgt").size(1);
  const Tensor y = model->forward(in.at("src"), in.at("tgt"), padding(c, "src_visible"),
                                 padding(c, "tgt_visible").mask(nn::TransformerImpl::generate_square_subsequent_mask(T)),
                                 padding(c, "memory_visible"));
  compare_all(c, *model, in, y, {"src_visible", "tgt_visible", "memory_visible"});
}

// batch_first(false), PyTorch's default: (T, B, E) in and out; masks keep their (B, T) shape.
TEST_CASE("golden transformer: batch_first=False encoder layer, decoder layer, MultiheadAttention") {
  {
    const std::string c = "encoder_layer_seq_first";
    nn::TransformerEncoderLayer layer(options().batch_first(false));
    CHECK(layer->repr().find(", batch_first=False)") != std::string::npos);
    const Inputs in = inputs(c, {"src"});
    load(c, *layer, in);
    const Tensor y = layer(in.at("src"), padding(c, "src_visible"));  // (T, B, E)
    compare_all(c, *layer, in, y, {"src_visible"});
  }
  {
    const std::string c = "decoder_layer_seq_first";
    nn::TransformerDecoderLayer layer(options().norm_first(true).batch_first(false));
    const Inputs in = inputs(c, {"tgt", "memory"});
    load(c, *layer, in);
    const Tensor y = layer(in.at("tgt"), in.at("memory"), nn::AttentionMask().causal(), padding(c, "memory_visible"));
    compare_all(c, *layer, in, y, {"memory_visible"});
  }
  {
    const std::string c = "mha_seq_first";
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(E, H).batch_first(false));
    CHECK(mha->repr() == "MultiheadAttention(embed_dim=8, num_heads=2, batch_first=False)");
    const Inputs in = inputs(c, {"query", "key"});
    load(c, *mha, in);
    const Tensor y = mha(in.at("query"), in.at("key"), in.at("key"), padding(c, "memory_visible")).output;
    compare_all(c, *mha, in, y, {"memory_visible"});
    nn::KVCache cache(2, H, 8, E / H, E / H);
    CHECK(test::error_of([&] {
            mha->forward(in.at("query"), in.at("query"), in.at("query"), {}, {}, true, true, &cache,
                         nn::Attending::self);
          }) == "MultiheadAttention: cached decoding needs batch_first = true");
  }
}

TEST_CASE("Transformer batch_first=False: (T, B, E) in and out, the batch-first model's numbers") {
  manual_seed(5);
  const auto o = nn::TransformerOptions(E, H).num_encoder_layers(1).num_decoder_layers(2).dim_feedforward(F).dropout(0);
  nn::Transformer first(o);
  nn::Transformer seq(nn::TransformerOptions(o).batch_first(false));
  CHECK(seq->repr().find(", batch_first=False)") != std::string::npos);
  seq->load_state_dict(first->state_dict());
  const Tensor src = randn({2, 5, E}), tgt = randn({2, 4, E});
  const nn::AttentionMask causal = nn::AttentionMask().causal();
  const Tensor want = first(src, tgt, nn::AttentionMask(), causal);                          // (B, T, E)
  const Tensor got = seq(src.transpose(0, 1), tgt.transpose(0, 1), nn::AttentionMask(), causal);  // (T, B, E)
  REQUIRE(got.shape() == Shape({4, 2, E}));
  CHECK(test::allclose(got.transpose(0, 1), want, 1e-6, 1e-6));
}
