// transformer_decoder.h - nn::TransformerDecoderLayer and the stack nn::TransformerDecoder,
// as torch.nn's with batch_first=True (Vaswani et al. 2017; pre-norm: Xiong et al. 2020).
// Read transformer_encoder.h first: the decoder layer is the encoder layer with a
// cross-attention sub-layer between self-attention and the FFN.
//
//   post-norm (norm_first = false, the paper's):
//     x = norm1(x + dropout1(SelfAttn(x)))              SelfAttn(x)     = MultiHead(x, x, x)
//     x = norm2(x + dropout2(CrossAttn(x, memory)))     CrossAttn(x, m) = MultiHead(x, m, m)
//     x = norm3(x + dropout3(FFN(x)))
//   pre-norm (norm_first = true):
//     x = x + dropout1(SelfAttn(norm1(x)))
//     x = x + dropout2(CrossAttn(norm2(x), memory))
//     x = x + dropout3(FFN(norm3(x)))
// In cross-attention the queries come from the decoder (s_t in the README's notation) and the
// keys and values from the encoder's output `memory` (the h_j). The stack feeds the same
// memory to every layer: x = layers.{N-1}( ... layers.0(tgt, memory) ..., memory), then norm.
//
// Shapes: B batch, Tt target length, Ts source length, E = d_model, H = nhead, F = dim_feedforward.
//   tgt (B, Tt, E), memory (B, Ts, E) -> (B, Tt, E)
//   tgt_mask     on self-attention:  usually .causal() (query i sees keys j <= i), plus
//                key_padding (B, Tt) for padded targets
//   memory_mask  on cross-attention: usually key_padding (B, Ts) for padded sources;
//                a mask (Tt, Ts) or (B, H, Tt, Ts) too
// (heed's masks: 1 = may attend. PyTorch's tgt_mask + tgt_key_padding_mask, and memory_mask
// + memory_key_padding_mask, are each one AttentionMask here.)
//
// Parameters, named as torch's state_dict (in this order):
//   self_attn.{in_proj_weight (3E, E), in_proj_bias (3E), out_proj.weight (E, E), out_proj.bias (E)}
//   multihead_attn.{the same four}
//   linear1.weight (F, E)  linear1.bias (F)  linear2.weight (E, F)  linear2.bias (E)
//   norm1.{weight, bias} (E)  norm2.{weight, bias} (E)  norm3.{weight, bias} (E)
// The stack: "layers.<i>." prefixes, then "norm.weight", "norm.bias". As for the encoder,
// each layer of the stack is initialised afresh (PyTorch deep-copies one layer N times).
//
// Cost of one layer, nt = B*Tt and ns = B*Ts tokens (flops = 2 x multiply-adds; backward ~2x):
//   forward flops   self-attention  8 nt E^2 + 4 B Tt^2 E
//                   cross-attention 4 nt E^2 (Q, output) + 4 ns E^2 (K, V) + 4 B Tt Ts E
//                   FFN             4 nt E F            (+ norms, softmaxes, residuals)
//   parameters      8 E^2 + 2 E F + 15 E + F     (4,204,032 for E = 512, H = 8, F = 2048)
//   saved for backward  O(nt (E + F) + ns E) + the (B, H, Tt, Tt) and (B, H, Tt, Ts) weights
//
// Incremental decoding (layers/attention/kv_cache.h): each layer keeps a DecoderLayerCache, the
// self-attention's keys and values of the target so far and the cross-attention's projected
// memory; the stack keeps one per layer in a TransformerDecoderCache. A step feeds only the
// new target tokens (B, t, E), with tgt_mask .causal() (and key_padding (B, size() + t) if
// the targets are padded): each layer's self-attention attends to all cached tokens and the
// new ones, its cross-attention to the memory projected on the first step. The result
// equals rows size() .. size() + t - 1 of a full causal forward (tests/test_kv_cache.cpp).
// Memory: bytes_per_token() = num_layers * B * 2E * sizeof(real) for the self caches, plus
// num_layers * B * Ts * 2E * sizeof(real) for the memory. Decode under heed::NoGradGuard.
//   auto cache = decoder->make_cache(B, max_len);
//   heed::NoGradGuard no_grad;
//   for (...) y_t = decoder->forward(tgt_t, memory, nn::AttentionMask().causal(), src_mask, &cache);
//   cache.reorder(parent_beams);   // beam search: row b continues old row parent_beams[b]
//
// Example:
//   auto dec = nn::TransformerDecoderLayer(nn::TransformerDecoderLayerOptions(512, 8));
//   Tensor y = dec->forward(tgt, memory, nn::AttentionMask().causal(),      // (B, Tt, 512)
//                           nn::AttentionMask().key_padding(src_real));
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "../autograd/ops/attention/attend.h"
#include "dropout.h"
#include "attention/kv_cache.h"
#include "layer_norm.h"
#include "linear.h"
#include "module.h"
#include "attention/multihead_attention.h"
#include "transformer.h"

namespace heed::nn {

// One decoder layer's caches (layers/attention/kv_cache.h). Copying these caches is deep, as
// KVCache's (a beam fork is `auto branch = cache;`); a forward with a cache that throws, in
// any layer, leaves every layer's caches as they were (KVCache::Rollback), so a retry
// gives the answer of a step that never failed.
struct DecoderLayerCache {
  KVCache self_attn;   // (B, H, max_len, E/H) keys and values of the target tokens so far
  KVCache cross_attn;  // (B, H, Ts, E/H) the projected memory; undefined until the first step
};

// Every layer's caches, for TransformerDecoder::forward. The operations act on all layers.
class TransformerDecoderCache {
 public:
  std::vector<DecoderLayerCache> layers;  // one per decoder layer, in order

  int64_t size() const;  // target tokens cached: the position offset of the next token
  // Forgets the target and the memory (the cross caches become undefined, refilled from the
  // next memory, of any length); the self caches keep their batch size and max_len.
  void reset();
  // Keeps the first len target tokens (the memory stays). heed::Error naming KVCache unless
  // 0 <= len <= size().
  void crop(int64_t len);
  // Beam search: new row b = old row rows[b] in every self and (filled) cross cache; rows
  // may change the batch size (KVCache::reorder).
  void reorder(const IndexTensor& rows);
  int64_t bytes_per_token() const;  // the self caches' KVCache::bytes_per_token(), summed
  int64_t bytes() const;            // everything allocated, memory caches included
};

class TransformerDecoderLayerImpl : public Cloneable<TransformerDecoderLayerImpl> {
 public:
  explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options);

  // tgt (B, Tt, E), memory (B, Ts, E) -> (B, Tt, E). With a cache, tgt holds the Tt new
  // tokens and tgt_mask is for (Tt, cache->self_attn.size() + Tt) keys (above).
  Tensor forward(const Tensor& tgt, const Tensor& memory, const AttentionMask& tgt_mask = {},
                 const AttentionMask& memory_mask = {}, DecoderLayerCache* cache = nullptr);
  // Self-attention cache for batch rows and max_len target tokens; cross filled later.
  // heed::Error naming KVCache for sizes < 1.
  DecoderLayerCache make_cache(int64_t batch, int64_t max_len) const;
  // TransformerDecoderLayer(d_model=4, nhead=2, ..., norm_first=False); children in summary()
  std::string repr() const override;

  TransformerDecoderLayerOptions options;
  // registered in PyTorch's order, so named_parameters() lists its state_dict keys in order
  MultiheadAttention self_attn{nullptr};       // over the target
  MultiheadAttention multihead_attn{nullptr};  // target queries, memory keys/values
  Linear linear1{nullptr};                     // E -> F
  Dropout dropout{nullptr};                    // inside the FFN
  Linear linear2{nullptr};                     // F -> E
  LayerNorm norm1{nullptr}, norm2{nullptr}, norm3{nullptr};      // around each sub-layer
  Dropout dropout1{nullptr}, dropout2{nullptr}, dropout3{nullptr};

 private:
  Tensor forward_batch_first(const Tensor& tgt, const Tensor& memory, const AttentionMask& tgt_mask,
                             const AttentionMask& memory_mask, DecoderLayerCache* cache);
  Tensor sa_block(const Tensor& x, const AttentionMask& mask,  // dropout1(SelfAttn(x))
                  KVCache* cache);
  Tensor mha_block(const Tensor& x, const Tensor& memory,       // dropout2(CrossAttn(x, memory))
                   const AttentionMask& mask, KVCache* cache);
  Tensor ff_block(const Tensor& x);                             // dropout3(FFN(x))
};
HEED_MODULE(TransformerDecoderLayer);

class TransformerDecoderOptions {
 public:
  TransformerDecoderOptions(const TransformerDecoderLayerOptions& layer, int64_t num_layers)
      : layer_(layer), num_layers_(num_layers) {}
  HEED_ARG(TransformerDecoderLayerOptions, layer);
  HEED_ARG(int64_t, num_layers);
  // A final LayerNorm(d_model, eps = layer_norm_eps), registered as "norm" (torch's `norm=`).
  HEED_ARG(bool, norm) = false;
};

class TransformerDecoderImpl : public Cloneable<TransformerDecoderImpl> {
 public:
  explicit TransformerDecoderImpl(const TransformerDecoderOptions& options);

  // tgt (B, Tt, E), memory (B, Ts, E) -> (B, Tt, E); the same masks for every layer.
  // With a cache (from make_cache), tgt holds the Tt new tokens (above); heed::Error naming
  // TransformerDecoder when the cache has another number of layers.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const AttentionMask& tgt_mask = {},
                 const AttentionMask& memory_mask = {}, TransformerDecoderCache* cache = nullptr);
  // A cache for batch rows and max_len target tokens, one DecoderLayerCache per layer.
  TransformerDecoderCache make_cache(int64_t batch, int64_t max_len) const;
  std::string repr() const override;  // TransformerDecoder(num_layers=6, norm=True)

  TransformerDecoderOptions options;
  std::shared_ptr<LayerStack<TransformerDecoderLayer>> layers;  // "layers.0", "layers.1", ...
  LayerNorm norm{nullptr};                              // undefined without options.norm()
};
HEED_MODULE(TransformerDecoder);

}  // namespace heed::nn
