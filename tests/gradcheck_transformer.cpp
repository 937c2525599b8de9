// gradcheck_transformer.cpp - finite-difference checks (double build) of the Transformer
// layers: encoder and decoder layers, pre- and post-norm, relu and gelu, with key padding
// masks and a causal target mask (Tt != Ts in cross-attention); the stacks; nn::Transformer;
// the FFN.
// Each is checked with respect to its inputs and a few parameters from every sub-layer.
// Sizes: B=2, T=3 (Ts=4), E=4, H=2, F=6, dropout 0.
#include <string>

#include <heed/core/random.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/layers/feed_forward.h>
#include <heed/layers/transformer.h>
#include <heed/layers/transformer_decoder.h>
#include <heed/layers/transformer_encoder.h>
#include <heed/layers/transformer_model.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

nn::TransformerLayerOptions tiny() { return nn::TransformerLayerOptions(4, 2).dim_feedforward(6).dropout(0); }

// batch 0 sees every key; batch 1's last key is padding
Tensor padding(int64_t T) { return heed::test::right_padding({T, T - 1}, T); }

}  // namespace

TEST_CASE("gradcheck TransformerEncoderLayer: post/pre-norm, relu/gelu, key padding") {
  manual_seed(21);
  for (bool pre : {false, true}) {
    for (const std::string act : {"relu", "gelu"}) {
      CAPTURE(pre);
      CAPTURE(act);
      auto layer = nn::TransformerEncoderLayer(tiny().norm_first(pre).activation(act));
      Tensor x = param({2, 3, 4});
      const nn::AttentionMask mask = nn::AttentionMask().key_padding(padding(3));
      // gradcheck perturbs the tensors it is given in place; f reads them by capture
      auto f = [&](const V&) { return layer->forward(x, mask); };
      check_grad(f, {x});
      check_grad(f, {layer->self_attn->in_proj_weight, layer->self_attn->out_proj->bias,
                     layer->linear1->weight, layer->norm1->weight, layer->norm2->bias});
      check_grad(f, {layer->self_attn->in_proj_bias, layer->linear2->weight, layer->linear1->bias});
    }
  }
}

TEST_CASE("gradcheck TransformerDecoderLayer: post/pre-norm, causal tgt + padding, memory padding") {
  manual_seed(22);
  for (bool pre : {false, true}) {
    CAPTURE(pre);
    auto layer = nn::TransformerDecoderLayer(tiny().norm_first(pre).activation(pre ? "gelu" : "relu"));
    Tensor tgt = param({2, 3, 4}), memory = param({2, 4, 4});
    const nn::AttentionMask tgt_mask = nn::AttentionMask().causal().key_padding(padding(3));
    const nn::AttentionMask memory_mask = nn::AttentionMask().key_padding(padding(4));
    auto f = [&](const V&) { return layer->forward(tgt, memory, tgt_mask, memory_mask); };
    check_grad(f, {tgt, memory});
    check_grad(f, {layer->self_attn->in_proj_weight, layer->multihead_attn->in_proj_weight,
                   layer->multihead_attn->out_proj->weight, layer->norm3->weight});
    check_grad(f, {layer->multihead_attn->in_proj_bias, layer->linear2->bias, layer->norm2->weight,
                   layer->norm1->bias});
  }
}

TEST_CASE("gradcheck TransformerEncoder and TransformerDecoder: 2 layers + final norm") {
  manual_seed(23);
  auto enc = nn::TransformerEncoder(
      nn::TransformerEncoderOptions(tiny().norm_first(true), 2).norm(true));
  Tensor x = param({2, 3, 4});
  const nn::AttentionMask pad = nn::AttentionMask().key_padding(padding(3));
  auto fe = [&](const V&) { return enc->forward(x, pad); };
  check_grad(fe, {x, (*enc->layers)[0].linear1->weight, (*enc->layers)[1].self_attn->in_proj_weight,
                  enc->norm->weight});

  auto dec = nn::TransformerDecoder(nn::TransformerDecoderOptions(tiny(), 2).norm(true));
  Tensor tgt = param({2, 3, 4}), memory = param({2, 4, 4});
  auto fd = [&](const V&) {
    return dec->forward(tgt, memory, nn::AttentionMask().causal(), nn::AttentionMask().key_padding(padding(4)));
  };
  check_grad(fd, {tgt, memory, (*dec->layers)[0].multihead_attn->in_proj_weight,
                  (*dec->layers)[1].norm2->weight, dec->norm->bias});
}

TEST_CASE("gradcheck PositionwiseFeedForward: relu and gelu") {
  manual_seed(24);
  for (const std::string act : {"relu", "gelu"}) {
    CAPTURE(act);
    auto ff = nn::PositionwiseFeedForward(nn::FeedForwardOptions(4, 6).dropout(0).activation(act));
    Tensor x = param({2, 3, 4});
    check_grad([&](const V&) { return ff->forward(x); },
               {x, ff->linear1->weight, ff->linear1->bias, ff->linear2->weight, ff->linear2->bias});
  }
}

TEST_CASE("gradcheck Transformer: src and tgt through encoder and decoder, post/pre-norm, every mask") {
  manual_seed(25);
  for (bool pre : {false, true}) {
    CAPTURE(pre);
    auto model = nn::Transformer(nn::TransformerOptions(4, 2).num_encoder_layers(1)
                                                       .num_decoder_layers(2).dim_feedforward(6).dropout(0).norm_first(pre));
    Tensor src = param({2, 4, 4}), tgt = param({2, 3, 4});
    const nn::AttentionMask src_mask = nn::AttentionMask().key_padding(padding(4));
    const nn::AttentionMask tgt_mask = nn::AttentionMask().causal().key_padding(padding(3));
    auto f = [&](const V&) { return model->forward(src, tgt, src_mask, tgt_mask, src_mask); };
    check_grad(f, {src, tgt});
    nn::TransformerEncoderLayerImpl& e0 = (*model->encoder->layers)[0];
    nn::TransformerDecoderLayerImpl& d1 = (*model->decoder->layers)[1];
    check_grad(f, {e0.self_attn->in_proj_weight, e0.linear2->weight, model->encoder->norm->weight,
                   d1.multihead_attn->in_proj_weight, d1.norm3->bias, model->decoder->norm->weight});
  }
}
