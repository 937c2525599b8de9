// test_transformer_model.cpp - nn::Transformer (float build): torch.nn.Transformer's
// defaults and state_dict keys, its initialisation, forward = decode(encode), the subsequent
// mask, cached incremental decoding equal to forward's rows, and errors that name it.
// Outputs and gradients against PyTorch: test_golden_transformer.cpp ("transformer_*");
// loading torch's saved weights: test_golden_safetensors.cpp.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/shape.h>
#include <heed/core/random.h>
#include <heed/layers/transformer_model.h>
#include "helpers.h"

using namespace heed;

namespace {

nn::TransformerOptions tiny() {  // E 8, H 2, F 16, one layer each
  return nn::TransformerOptions(8, 2).num_encoder_layers(1).num_decoder_layers(1).dim_feedforward(16).dropout(0);
}

}  // namespace

TEST_CASE("Transformer options: torch.nn.Transformer's defaults, and repr") {
  const nn::TransformerOptions o;
  CHECK(o.d_model() == 512);
  CHECK(o.nhead() == 8);
  CHECK(o.num_encoder_layers() == 6);
  CHECK(o.num_decoder_layers() == 6);
  CHECK(o.dim_feedforward() == 2048);
  CHECK(o.dropout() == doctest::Approx(0.1));
  CHECK(o.activation() == "relu");
  CHECK(o.layer_norm_eps() == doctest::Approx(1e-5));
  CHECK_FALSE(o.norm_first());
  CHECK(nn::Transformer(tiny().norm_first(true))->repr() ==
        "Transformer(num_encoder_layers=1, num_decoder_layers=1, d_model=8, nhead=2, dim_feedforward=16, "
        "dropout=0.0, activation='relu', layer_norm_eps=1e-05, norm_first=True)");
}

TEST_CASE("Transformer: state_dict keys are torch.nn.Transformer's, in order; matrices xavier_uniform_") {
  manual_seed(3);
  nn::Transformer model(tiny());
  // torch.nn.Transformer(8, 2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16,
  // batch_first=True).state_dict().keys(), printed by torch 1.13
  const std::string torch_keys =
      "encoder.layers.0.self_attn.in_proj_weight encoder.layers.0.self_attn.in_proj_bias "
      "encoder.layers.0.self_attn.out_proj.weight encoder.layers.0.self_attn.out_proj.bias "
      "encoder.layers.0.linear1.weight encoder.layers.0.linear1.bias encoder.layers.0.linear2.weight "
      "encoder.layers.0.linear2.bias encoder.layers.0.norm1.weight encoder.layers.0.norm1.bias "
      "encoder.layers.0.norm2.weight encoder.layers.0.norm2.bias encoder.norm.weight encoder.norm.bias "
      "decoder.layers.0.self_attn.in_proj_weight decoder.layers.0.self_attn.in_proj_bias "
      "decoder.layers.0.self_attn.out_proj.weight decoder.layers.0.self_attn.out_proj.bias "
      "decoder.layers.0.multihead_attn.in_proj_weight decoder.layers.0.multihead_attn.in_proj_bias "
      "decoder.layers.0.multihead_attn.out_proj.weight decoder.layers.0.multihead_attn.out_proj.bias "
      "decoder.layers.0.linear1.weight decoder.layers.0.linear1.bias decoder.layers.0.linear2.weight "
      "decoder.layers.0.linear2.bias decoder.layers.0.norm1.weight decoder.layers.0.norm1.bias "
      "decoder.layers.0.norm2.weight decoder.layers.0.norm2.bias decoder.layers.0.norm3.weight "
      "decoder.layers.0.norm3.bias decoder.norm.weight decoder.norm.bias";
  std::vector<std::string> want;
  std::istringstream in(torch_keys);
  for (std::string k; in >> k;) want.push_back(k);
  std::vector<std::string> got;
  for (const auto& [name, t] : model->state_dict()) got.push_back(name);
  CHECK(got == want);
  CHECK(model->encoder->norm);
  CHECK(model->decoder->norm);

  // Every matrix drawn from U(-a, a), a = sqrt(6 / (fan_in + fan_out)), and spread over it.
  for (const auto& [name, p] : model->named_parameters()) {
    if (p.dim() != 2) continue;
    CAPTURE(name);
    const double a = std::sqrt(6.0 / double(p.size(0) + p.size(1)));
    double lo = 0, hi = 0;
    for (real v : p.to_vector()) lo = std::min(lo, double(v)), hi = std::max(hi, double(v));
    CHECK(hi <= a);
    CHECK(lo >= -a);
    CHECK(hi - lo > a);  // not Linear's narrower U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for linear2 (16 -> 8)
  }
}

TEST_CASE("Transformer: forward is decode(tgt, encode(src)); the subsequent mask is causal()") {
  manual_seed(5);
  for (bool pre : {false, true}) {
    CAPTURE(pre);
    nn::Transformer model(tiny().num_encoder_layers(2).num_decoder_layers(2).norm_first(pre));
    Tensor src = randn({2, 5, 8}), tgt = randn({2, 4, 8});
    const nn::AttentionMask src_mask = nn::AttentionMask().key_padding(test::right_padding({5, 3}, 5));
    const Tensor y = model->forward(src, tgt, src_mask, nn::AttentionMask().causal(), src_mask);
    CHECK(y.shape() == Shape{2, 4, 8});
    const Tensor memory = model->encoder->forward(src, src_mask);
    CHECK(test::allclose(y, model->decoder->forward(tgt, memory, nn::AttentionMask().causal(), src_mask), 0, 0));
    CHECK(test::allclose(y, model->decode(tgt, model->encode(src, src_mask), nn::AttentionMask().causal(), src_mask), 0, 0));
    const Tensor square = nn::TransformerImpl::generate_square_subsequent_mask(4);
    CHECK(test::allclose(y, model->forward(src, tgt, src_mask, nn::AttentionMask().mask(square), src_mask), 1e-6, 1e-6));
    // and the causal mask matters: without it the first row sees the future
    CHECK_FALSE(test::allclose(y, model->forward(src, tgt, src_mask, {}, src_mask), 1e-3, 1e-3));
  }
  CHECK(nn::TransformerImpl::generate_square_subsequent_mask(3).to_vector() == std::vector<real>{1, 0, 0, 1, 1, 0, 1, 1, 1});
  CHECK(nn::TransformerImpl::generate_square_subsequent_mask(0).shape() == Shape{0, 0});
}

TEST_CASE("Transformer: decode with a cache, a prefix then one token at a time, equals forward's rows") {
  manual_seed(9);
  nn::Transformer model(tiny().num_decoder_layers(2).norm_first(true));
  model->eval();
  Tensor src = randn({2, 6, 8}), tgt = randn({2, 5, 8});
  const nn::AttentionMask src_mask = nn::AttentionMask().key_padding(test::right_padding({6, 4}, 6));
  NoGradGuard no_grad;
  const Tensor full = model->forward(src, tgt, src_mask, nn::AttentionMask().causal(), src_mask);  // (2, 5, 8)
  const Tensor memory = model->encode(src, src_mask);
  nn::TransformerDecoderCache cache = model->make_cache(2, 8);
  const Tensor head = model->decode(narrow(tgt, 1, 0, 2), memory, nn::AttentionMask().causal(), src_mask, &cache);
  CHECK(test::allclose(head, narrow(full, 1, 0, 2), 1e-5, 1e-5));
  for (int64_t t = 2; t < 5; ++t) {
    CAPTURE(t);
    CHECK(cache.size() == t);
    const Tensor y = model->decode(narrow(tgt, 1, t, 1), memory, nn::AttentionMask().causal(), src_mask, &cache);
    CHECK(test::allclose(y, narrow(full, 1, t, 1), 1e-5, 1e-5));
  }
}

TEST_CASE("Transformer errors name it and the offending values") {
  CHECK_THROWS_WITH_AS(nn::Transformer(tiny().num_encoder_layers(0)),
                       doctest::Contains("Transformer: num_encoder_layers and num_decoder_layers must be >= 1; got 0 and 1"),
                       Error);
  CHECK_THROWS_WITH_AS(nn::Transformer(tiny().num_decoder_layers(-2)), doctest::Contains("got 1 and -2"), Error);
  CHECK_THROWS_WITH_AS(nn::Transformer(nn::TransformerOptions(6, 4)),
                       doctest::Contains("d_model 6 must be divisible by nhead 4"), Error);
  CHECK_THROWS_WITH_AS(nn::Transformer(tiny().dropout(1)), doctest::Contains("Transformer"), Error);
  CHECK_THROWS_WITH_AS(nn::Transformer(tiny().activation("tanh")), doctest::Contains("tanh"), Error);
  nn::Transformer model(tiny());
  CHECK_THROWS_WITH_AS(model->forward(randn({2, 5, 8}), randn({3, 4, 8})),
                       doctest::Contains("the batch number of src and tgt must be equal; got src (2,5,8) and tgt (3,4,8)"),
                       Error);
  CHECK_THROWS_WITH_AS(model->forward(randn({2, 5, 6}), randn({2, 4, 8})),
                       doctest::Contains("Transformer: src must be (B, T, 8)"), Error);
  CHECK_THROWS_WITH_AS(model->forward(randn({2, 5, 8}), randn({4, 8})), doctest::Contains("Transformer: tgt must be (B, T, 8)"),
                       Error);
  CHECK_THROWS_WITH_AS(model->forward(randn({2, 5, 8}), Tensor()), doctest::Contains("tgt"), Error);
  CHECK_THROWS_WITH_AS(nn::TransformerImpl::generate_square_subsequent_mask(-1), doctest::Contains("sz >= 0; got -1"), Error);
  nn::TransformerDecoderCache wrong = nn::Transformer(tiny().num_decoder_layers(3))->make_cache(2, 4);
  CHECK_THROWS_WITH_AS(model->decode(randn({2, 1, 8}), randn({2, 5, 8}), nn::AttentionMask().causal(), {}, &wrong),
                       doctest::Contains("TransformerDecoder"), Error);
}
