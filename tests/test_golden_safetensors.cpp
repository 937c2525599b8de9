// test_golden_safetensors.cpp - torch.nn modules' state dicts, saved by PyTorch as safetensors
// (tests/golden/safetensors/, made by tests/golden/gen_safetensors.py), load strictly into
// heed's twins, which reproduce torch's outputs (float32 both, atol and rtol 1e-5).
//
// With HEED_SAFETENSORS_EXPORT=<dir> set (the generator sets it), each case also writes its
// heed twin (heed's own initialisation) and heed's outputs on the same inputs to <dir>, which
// the generator loads into torch with strict=True and checks: the other direction.
#include <cstdlib>

#include <heed/core/elementwise.h>
#include <heed/core/random.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/linear.h>
#include <heed/layers/activation.h>
#include <heed/layers/embedding.h>
#include <heed/layers/gru.h>
#include <heed/layers/layer_norm.h>
#include <heed/layers/linear.h>
#include <heed/layers/lstm.h>
#include <heed/layers/module.h>
#include <heed/layers/attention/multihead_attention.h>
#include <heed/layers/sequential.h>
#include <heed/layers/transformer.h>
#include <heed/layers/transformer_decoder.h>
#include <heed/layers/transformer_encoder.h>
#include <heed/layers/transformer_model.h>
#include <heed/optim/safetensors.h>
#include "helpers.h"

using namespace heed;
namespace st = heed::safetensors;

namespace {

const std::string kDir = "tests/golden/safetensors/";
using Outputs = std::vector<std::pair<std::string, Tensor>>;  // output name -> value

// Loads <name>.safetensors strictly into m, runs `run` on <name>.io.safetensors's inputs and
// compares each output with torch's; then, if asked, exports heed's twin the other way.
template <class M, class Run>
void check(const std::string& name, M& m, const Run& run) {
  CAPTURE(name);
  const st::Contents io = st::load_file(kDir + name + ".io.safetensors");
  std::map<std::string, Tensor> in, want;
  for (const auto& [k, t] : io.tensors) (k.rfind("in.", 0) == 0 ? in : want)[k.substr(k.find('.') + 1)] = t;

  // The other direction first, from heed's own initialisation (seeded).
  if (const char* dir = std::getenv("HEED_SAFETENSORS_EXPORT")) {
    const std::string base = std::string(dir) + "/" + name;
    st::save_model(m, base + ".safetensors");
    NamedTensors io_out;
    for (const auto& [k, t] : in) io_out.emplace_back("in." + k, t);
    NoGradGuard ng;
    for (const auto& [k, t] : run(m, in)) io_out.emplace_back("out." + k, t);
    st::save_file(io_out, base + ".io.safetensors");
  }

  REQUIRE(st::load_model(m, kDir + name + ".safetensors").empty());  // strict: every key, every shape
  NoGradGuard ng;
  const Outputs got = run(m, in);
  REQUIRE(got.size() == want.size());
  for (const auto& [k, t] : got) {
    CAPTURE(k);
    REQUIRE(want.count(k));
    CHECK(test::allclose(t, want.at(k), 1e-5, 1e-5));
  }
}

IndexTensor ids_of(const Tensor& t) {  // ids stored as floats
  std::vector<int64_t> v(t.data(), t.data() + t.numel());
  return IndexTensor(v, t.shape());
}

constexpr int64_t E = 8, H = 2, FF = 16;
nn::TransformerLayerOptions layer() { return nn::TransformerLayerOptions(E, H).dim_feedforward(FF).dropout(0); }

}  // namespace

TEST_SUITE("golden safetensors") {
TEST_CASE("golden safetensors: Linear, Embedding, LayerNorm, Sequential") {
  manual_seed(11);
  nn::Linear linear(4, 3);
  check("linear", linear, [](nn::Linear& m, auto& in) { return Outputs{{"y", m->forward(in.at("x"))}}; });
  nn::Embedding emb(7, 3);
  check("embedding", emb, [](nn::Embedding& m, auto& in) { return Outputs{{"y", m->forward(ids_of(in.at("ids")))}}; });
  nn::LayerNorm ln(nn::LayerNormOptions({5}));
  check("layer_norm", ln, [](nn::LayerNorm& m, auto& in) { return Outputs{{"y", m->forward(in.at("x"))}}; });
  nn::Sequential seq(nn::Linear(4, 6), nn::Tanh(), nn::Linear(6, 2));
  check("sequential", seq, [](nn::Sequential& m, auto& in) { return Outputs{{"y", m->forward(in.at("x"))}}; });
}

TEST_CASE("golden safetensors: 2-layer bidirectional LSTM and GRU") {
  manual_seed(12);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  check("lstm_2layer_bidir", lstm, [](nn::LSTM& m, auto& in) {
    auto [y, h, c] = m->forward(in.at("x"));
    return Outputs{{"y", y}, {"h_n", h}};
  });
  nn::GRU gru(nn::GRUOptions(3, 4).num_layers(2).bidirectional(true));
  check("gru_2layer_bidir", gru, [](nn::GRU& m, auto& in) {
    auto [y, h] = m->forward(in.at("x"));
    return Outputs{{"y", y}, {"h_n", h}};
  });
}

TEST_CASE("golden safetensors: MultiheadAttention, packed and with kdim/vdim") {
  manual_seed(13);
  auto run = [](nn::MultiheadAttention& m, auto& in) {
    return Outputs{{"y", m->forward(in.at("q"), in.at("k"), in.at("v")).output}};
  };
  nn::MultiheadAttention packed(nn::MultiheadAttentionOptions(E, H));
  check("mha_packed", packed, run);
  nn::MultiheadAttention kv(nn::MultiheadAttentionOptions(E, H).kdim(5).vdim(6));
  check("mha_kdim_vdim", kv, run);
}

TEST_CASE("golden safetensors: TransformerEncoder, TransformerDecoder, Transformer") {
  manual_seed(14);
  nn::TransformerEncoder enc(nn::TransformerEncoderOptions(layer(), 2).norm(true));
  check("transformer_encoder", enc,
        [](nn::TransformerEncoder& m, auto& in) { return Outputs{{"y", m->forward(in.at("src"))}}; });
  nn::TransformerDecoder dec(nn::TransformerDecoderOptions(layer(), 2).norm(true));
  check("transformer_decoder", dec, [](nn::TransformerDecoder& m, auto& in) {
    return Outputs{{"y", m->forward(in.at("tgt"), in.at("memory"), nn::AttentionMask().causal())}};
  });
  nn::Transformer tr(nn::TransformerOptions(E, H).num_encoder_layers(1).num_decoder_layers(1).dim_feedforward(FF).dropout(0));
  check("transformer", tr, [](nn::Transformer& m, auto& in) {
    return Outputs{{"y", m->forward(in.at("src"), in.at("tgt"), {}, nn::AttentionMask().causal())}};
  });
}
}
