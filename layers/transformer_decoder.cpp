// transformer_decoder.cpp - one decoder layer (self-attention, cross-attention, FFN; pre- or
// post-norm), and the stack of them. The equations are in transformer_decoder.h.
#include "transformer_decoder.h"

#include "../autograd/ops/arith.h"
#include "../core/error.h"
#include "feed_forward.h"

namespace heed::nn {

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& opts)
    : options(opts) {
  options.check("TransformerDecoderLayer");
  const int64_t E = options.d_model(), F = options.dim_feedforward();
  const double p = options.dropout();
  const MultiheadAttentionOptions mha = MultiheadAttentionOptions(E, options.nhead()).dropout(p);
  const LayerNormOptions ln = LayerNormOptions({E}).eps(options.layer_norm_eps());
  self_attn = register_module("self_attn", MultiheadAttention(mha));
  multihead_attn = register_module("multihead_attn", MultiheadAttention(mha));
  linear1 = register_module("linear1", Linear(E, F));
  dropout = register_module("dropout", Dropout(p));
  linear2 = register_module("linear2", Linear(F, E));
  norm1 = register_module("norm1", LayerNorm(ln));
  norm2 = register_module("norm2", LayerNorm(ln));
  norm3 = register_module("norm3", LayerNorm(ln));
  dropout1 = register_module("dropout1", Dropout(p));
  dropout2 = register_module("dropout2", Dropout(p));
  dropout3 = register_module("dropout3", Dropout(p));
}

// dropout1(MultiHead(x, x, x))
Tensor TransformerDecoderLayerImpl::sa_block(const Tensor& x, const AttentionMask& mask,
                                         KVCache* cache) {
  return dropout1->forward(
      self_attn->forward(x, x, x, mask, {}, /*need_weights=*/false, true, cache, Attending::self).output);
}

// dropout2(MultiHead(x, memory, memory)): queries from the decoder, keys and values from memory
Tensor TransformerDecoderLayerImpl::mha_block(const Tensor& x, const Tensor& memory,
                                          const AttentionMask& mask, KVCache* cache) {
  return dropout2->forward(
      multihead_attn->forward(x, memory, memory, mask, {}, /*need_weights=*/false, true, cache,
                             Attending::cross).output);
}

// dropout3(linear2(dropout(act(linear1(x)))))
Tensor TransformerDecoderLayerImpl::ff_block(const Tensor& x) {
  return dropout3->forward(
      feed_forward("TransformerDecoderLayer", x, *linear1, options.activation(), *dropout, *linear2));
}

// batch_first = false: (T, B, E) in and out, the batch-first computation between.
Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory,
                                        const AttentionMask& tgt_mask, const AttentionMask& memory_mask,
                                        DecoderLayerCache* cache) {
  if (options.batch_first()) return forward_batch_first(tgt, memory, tgt_mask, memory_mask, cache);
  const char* op = "TransformerDecoderLayer";
  HEED_CHECK(cache == nullptr, op, "cached decoding needs batch_first = true");
  HEED_CHECK(tgt.defined() && tgt.dim() == 3 && memory.defined() && memory.dim() == 3, op,
             "with batch_first = false, tgt and memory must be defined and 3-D, (T, B, E)");
  return forward_batch_first(tgt.transpose(0, 1), memory.transpose(0, 1), tgt_mask, memory_mask, nullptr)
      .transpose(0, 1);
}

Tensor TransformerDecoderLayerImpl::forward_batch_first(const Tensor& tgt, const Tensor& memory,
                                        const AttentionMask& tgt_mask, const AttentionMask& memory_mask,
                                        DecoderLayerCache* cache) {
  const char* op = "TransformerDecoderLayer";
  check_sequence(op, "tgt", tgt, options.d_model());
  check_sequence(op, "memory", memory, options.d_model());
  HEED_CHECK(tgt.size(0) == memory.size(0), op, "tgt ", tgt.shape(), " and memory ", memory.shape(),
             " have different batch sizes");
  KVCache* sc = cache ? &cache->self_attn : nullptr;   // the target's keys and values so far
  KVCache* cc = cache ? &cache->cross_attn : nullptr;  // the projected memory
  KVCache::Rollback undo;  // a throw in any sub-layer leaves both caches as they were
  undo.watch(sc), undo.watch(cc);
  Tensor x = tgt;  // (B, Tt, E)
  if (options.norm_first()) {
    x = x + sa_block(norm1->forward(x), tgt_mask, sc);                 // x + dropout1(SelfAttn(norm1(x)))
    x = x + mha_block(norm2->forward(x), memory, memory_mask, cc);     // x + dropout2(CrossAttn(norm2(x), m))
    x = x + ff_block(norm3->forward(x));                               // x + dropout3(FFN(norm3(x)))
  } else {
    x = norm1->forward(x + sa_block(x, tgt_mask, sc));                 // norm1(x + dropout1(SelfAttn(x)))
    x = norm2->forward(x + mha_block(x, memory, memory_mask, cc));     // norm2(x + dropout2(CrossAttn(x, m)))
    x = norm3->forward(x + ff_block(x));                         // norm3(x + dropout3(FFN(x)))
  }
  undo.commit();
  return x;
}

DecoderLayerCache TransformerDecoderLayerImpl::make_cache(int64_t batch, int64_t max_len) const {
  const MultiheadAttentionOptions& o = self_attn->options;
  return {KVCache(batch, o.num_heads(), max_len, o.head_dim_k(), o.head_dim_v()), KVCache()};
}

std::string TransformerDecoderLayerImpl::repr() const {
  return "TransformerDecoderLayer(" + options.repr_args() + ")";
}

TransformerDecoderImpl::TransformerDecoderImpl(const TransformerDecoderOptions& opts) : options(opts) {
  HEED_CHECK(options.num_layers() >= 1, "TransformerDecoder", "num_layers must be >= 1; got ",
             options.num_layers());
  options.layer().check("TransformerDecoder");
  layers = register_module("layers", std::make_shared<LayerStack<TransformerDecoderLayer>>());
  for (int64_t i = 0; i < options.num_layers(); ++i)  // each layer drawn afresh (see header)
    layers->push_back(TransformerDecoderLayer(options.layer()));
  if (options.norm())
    norm = register_module("norm", LayerNorm(LayerNormOptions({options.layer().d_model()})
                                                                   .eps(options.layer().layer_norm_eps())));
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory,
                                   const AttentionMask& tgt_mask, const AttentionMask& memory_mask,
                                   TransformerDecoderCache* cache) {
  HEED_CHECK(!cache || cache->layers.size() == layers->size(), "TransformerDecoder", "the cache has ",
             cache ? cache->layers.size() : 0, " layers, the decoder ", layers->size(),
             " (make it with make_cache)");
  // Strong exception guarantee: a layer that throws (a bad memory_mask is first seen by the
  // cross-attention of layer 0, a later layer may fail for its own reasons) leaves every
  // layer's caches as they were, those already written included, so a retry is exact.
  KVCache::Rollback undo;
  if (cache)
    for (DecoderLayerCache& l : cache->layers) undo.watch(&l.self_attn), undo.watch(&l.cross_attn);
  Tensor x = tgt;  // (B, Tt, E); each layer checks the shapes
  for (size_t i = 0; i < layers->size(); ++i)
    x = (*layers)[i].forward(x, memory, tgt_mask, memory_mask, cache ? &cache->layers[i] : nullptr);
  if (norm) x = norm->forward(x);
  undo.commit();
  return x;
}

TransformerDecoderCache TransformerDecoderImpl::make_cache(int64_t batch, int64_t max_len) const {
  TransformerDecoderCache cache;
  for (size_t i = 0; i < layers->size(); ++i) cache.layers.push_back((*layers)[i].make_cache(batch, max_len));
  return cache;
}

int64_t TransformerDecoderCache::size() const {
  return layers.empty() ? 0 : layers[0].self_attn.size();
}

void TransformerDecoderCache::reset() {
  for (DecoderLayerCache& l : layers) {
    l.self_attn.reset();
    l.cross_attn = KVCache();  // the next memory may differ in length
  }
}

void TransformerDecoderCache::crop(int64_t len) {
  for (DecoderLayerCache& l : layers) l.self_attn.crop(len);
}

void TransformerDecoderCache::reorder(const IndexTensor& rows) {
  for (DecoderLayerCache& l : layers)
    for (KVCache* c : {&l.self_attn, &l.cross_attn})
      if (c->defined()) c->reorder(rows);
}

int64_t TransformerDecoderCache::bytes_per_token() const {
  int64_t n = 0;
  for (const DecoderLayerCache& l : layers) n += l.self_attn.bytes_per_token();
  return n;
}

int64_t TransformerDecoderCache::bytes() const {
  int64_t n = 0;
  for (const DecoderLayerCache& l : layers) n += l.self_attn.bytes() + l.cross_attn.bytes();
  return n;
}

std::string TransformerDecoderImpl::repr() const {
  return "TransformerDecoder(num_layers=" + std::to_string(options.num_layers()) +
         ", norm=" + (options.norm() ? "True" : "False") + ")";
}

}  // namespace heed::nn
