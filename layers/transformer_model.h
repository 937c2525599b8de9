// transformer_model.h - nn::Transformer, the encoder-decoder of Vaswani et al. 2017 as
// torch.nn.Transformer with batch_first=True: an nn::TransformerEncoder and an
// nn::TransformerDecoder, each a stack of layers ending in a LayerNorm. Read
// transformer_encoder.h and transformer_decoder.h first; this file only joins them.
//
//   memory = encoder.norm(encoder.layers.{Ne-1}( ... encoder.layers.0(src, src_mask) ...))
//   out    = decoder.norm(decoder.layers.{Nd-1}( ... decoder.layers.0(tgt, memory, tgt_mask,
//                                                                     memory_mask) ...))
//
// Shapes: B batch, S source length, T target length, E = d_model, H = nhead.
//   src (B, S, E), tgt (B, T, E) -> (B, T, E)
// The inputs are embeddings: token embeddings, positions and the output projection to a
// vocabulary are the caller's (as in PyTorch; examples/common/transformer_seq2seq.h adds them).
//
// Masks are heed's AttentionMasks (1 = may attend; autograd/ops/attention/attention_mask.h), one per
// attention, each holding what PyTorch splits in two:
//   PyTorch                                         heed
//   src_mask (S, S) + src_key_padding_mask (B, S)   src_mask    .mask(..) .key_padding(..)
//   tgt_mask (T, T) + tgt_key_padding_mask (B, T)   tgt_mask    .causal() .key_padding(..)
//   memory_mask (T, S) + memory_key_padding_mask    memory_mask .mask(..) .key_padding(..)
// A PyTorch boolean mask m (True = ignore) is heed's 1 - m; a float mask of 0 and -inf is
// heed's (m == 0). PyTorch's Transformer.generate_square_subsequent_mask(T), -inf above the
// diagonal, is generate_square_subsequent_mask(T) here: 1 on and below the diagonal, the same
// keys hidden, for AttentionMask().mask(..). AttentionMask().causal() says the same without
// a (T, T) tensor (and, with a cache, aligns the last query with the last key).
//
// Parameters, named as torch's state_dict (so a torch.nn.Transformer's weights load one to one):
//   encoder.layers.<i>.{self_attn.*, linear1.*, linear2.*, norm1.*, norm2.*}   encoder.norm.{weight, bias}
//   decoder.layers.<i>.{self_attn.*, multihead_attn.*, linear1.*, linear2.*, norm1.*, norm2.*, norm3.*}
//   decoder.norm.{weight, bias}
// Initialisation is PyTorch's: after the layers' own, xavier_uniform_ on every parameter
// with more than one dimension (torch.nn.Transformer._reset_parameters).
//
// Incremental decoding: encode() once, then decode() the new target tokens with a cache
// from make_cache (layers/attention/kv_cache.h; TransformerDecoder's cache): each step costs one
// position per layer instead of all of them, and equals the matching rows of forward().
//   Tensor memory = model->encode(src, src_mask);                       // (B, S, E)
//   auto cache = model->make_cache(B, max_len);
//   heed::NoGradGuard no_grad;
//   y = model->decode(x_t, memory, nn::AttentionMask().causal(), src_mask, &cache);  // (B, 1, E)
//
// Example:
//   auto model = nn::Transformer(nn::TransformerOptions(512, 8)
//       .num_encoder_layers(6).num_decoder_layers(6).dim_feedforward(2048).norm_first(true));
//   Tensor y = model->forward(src, tgt, nn::AttentionMask().key_padding(src_real),      // (B, T, 512)
//                             nn::AttentionMask().causal(), nn::AttentionMask().key_padding(src_real));
#pragma once
#include <memory>
#include <string>

#include "transformer_decoder.h"
#include "transformer_encoder.h"

namespace heed::nn {

// torch.nn.Transformer's arguments and defaults (libtorch's TransformerOptions).
class TransformerOptions {
 public:
  explicit TransformerOptions(int64_t d_model = 512, int64_t nhead = 8)
      : d_model_(d_model), nhead_(nhead) {}
  HEED_ARG(int64_t, d_model);
  HEED_ARG(int64_t, nhead);
  HEED_ARG(int64_t, num_encoder_layers) = 6;
  HEED_ARG(int64_t, num_decoder_layers) = 6;
  HEED_ARG(int64_t, dim_feedforward) = 2048;
  HEED_ARG(double, dropout) = 0.1;
  HEED_ARG(std::string, activation) = "relu";
  HEED_ARG(double, layer_norm_eps) = 1e-5;
  HEED_ARG(bool, norm_first) = false;  // post-norm, as the paper
  // true (heed's default, unlike PyTorch's): src, tgt and the output are (B, T, E); false
  // (PyTorch's default): (T, B, E), masks keep their batch-first shapes. The layers inside
  // stay batch-first (layer() leaves it out): forward transposes once at each end.
  HEED_ARG(bool, batch_first) = true;

  // Every encoder and decoder layer's options, made from the ones above.
  TransformerLayerOptions layer() const {
    return TransformerLayerOptions(d_model(), nhead()).dim_feedforward(dim_feedforward())
        .dropout(dropout()).activation(activation()).layer_norm_eps(layer_norm_eps())
        .norm_first(norm_first());
  }
};

class TransformerImpl : public Cloneable<TransformerImpl> {
 public:
  // heed::Error naming Transformer for a bad option (TransformerLayerOptions::check) or
  // fewer than one encoder or decoder layer.
  explicit TransformerImpl(const TransformerOptions& options = TransformerOptions());

  // src (B, S, E), tgt (B, T, E) -> (B, T, E) = decode(tgt, encode(src, src_mask), tgt_mask,
  // memory_mask). heed::Error naming Transformer unless src and tgt are (B, ., d_model) with
  // the same B (PyTorch's "the batch number of src and tgt must be equal").
  Tensor forward(const Tensor& src, const Tensor& tgt, const AttentionMask& src_mask = {},
                 const AttentionMask& tgt_mask = {}, const AttentionMask& memory_mask = {});
  // src (B, S, E) -> memory (B, S, E): the encoder stack and its norm.
  Tensor encode(const Tensor& src, const AttentionMask& src_mask = {});
  // tgt (B, T, E), memory (B, S, E) -> (B, T, E): the decoder stack and its norm. With a
  // cache, tgt holds the new tokens only (TransformerDecoder::forward).
  Tensor decode(const Tensor& tgt, const Tensor& memory, const AttentionMask& tgt_mask = {},
                const AttentionMask& memory_mask = {}, TransformerDecoderCache* cache = nullptr);
  // The decoder's cache for batch rows and max_len target tokens.
  TransformerDecoderCache make_cache(int64_t batch, int64_t max_len) const;
  // (sz, sz): 1 where key j <= query i (may attend), 0 above the diagonal, where PyTorch's
  // has -inf. heed::Error naming Transformer for sz < 0.
  static Tensor generate_square_subsequent_mask(int64_t sz);
  // Transformer(d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, ...)
  std::string repr() const override;

  TransformerOptions options;
  TransformerEncoder encoder{nullptr};  // "encoder": layers + norm
  TransformerDecoder decoder{nullptr};  // "decoder": layers + norm
};
HEED_MODULE(Transformer);

}  // namespace heed::nn
