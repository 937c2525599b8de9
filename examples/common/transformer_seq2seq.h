// transformer_seq2seq.h - the date translator of examples/translate.cpp as a Transformer
// (`--model transformer`; Vaswani et al. 2017), written against <heed/heed.h> only: an
// nn::Transformer (torch.nn.Transformer's encoder-decoder, layers/transformer_model.h),
// pre-norm (Xiong et al. 2020) with a final LayerNorm on each stack, between embeddings with
// sinusoidal positions and an output projection.
//
//   x_j   = sqrt(E) E_src[src_j] + PE(j)               source characters, sinusoidal PE  (B, S, E)
//   m     = Encoder(x), source padding masked          memory, the h_j of the README     (B, S, E)
//   z_t   = sqrt(E) E_tgt[y_{t-1}] + PE(t),  y_{-1} = <s>                                 (B, T, E)
//   o     = Decoder(z, m): causal self-attention over z, cross-attention to m with the
//           source padding masked, in every layer                                        (B, T, E)
//   p(y_t | y_<t, x) = softmax(W_o o_t + b_o)                                            (B, T, V)
//
// Letters: B batch, S source length (padded), T target length, E = d_model, H heads, V target
// vocabulary. Masks are heed's (1 = may attend): the source's key_padding on the encoder's
// self-attention and on every cross-attention, .causal() on the decoder's self-attention.
// Targets need no padding mask: a padded position comes after </s>, so the causal mask already
// hides it from every real one, and the loss ignores its output (ignore_index).
// The embeddings start as N(0, 1/E), so that sqrt(E) E[y] is N(0, 1), as large as the
// positions' sines and cosines.
//
// Decoding (decode.h) goes through begin(), advance() and reorder() on a TransformerDecoding.
// With use_cache (the default) the state holds the decoder's key/value cache
// (layers/attention/kv_cache.h): advance() embeds only the newest token, at position cache.size(), and
// each decoder layer attends to its cached keys and values plus the new ones; the
// cross-attention projects the memory once, on the first step. reorder() selects the cache's
// rows as it selects the memory's (beam search: each survivor continues its parent's rows).
// Without it (translate --no-cache) advance() runs the decoder again over every token so far
// and keeps the last position's logits: O(t) positions per step instead of one. Both give
// the same tokens and logits (tests/test_translate.cpp).
// cross_attention() gives the last decoder layer's cross-attention weights for a chosen
// output, per head: the picture translate.cpp draws.
#pragma once
#include <heed/heed.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "dates.h"
#include "seq2seq.h"

namespace seq2seq {

class TransformerOptions {
 public:
  HEED_ARG(int64_t, d_model) = 64;  // E
  HEED_ARG(int64_t, nhead) = 4;     // H
  HEED_ARG(int64_t, encoder_layers) = 2;
  HEED_ARG(int64_t, decoder_layers) = 2;
  HEED_ARG(int64_t, dim_feedforward) = 256;  // F
  HEED_ARG(double, dropout) = 0.1;
};

// What decoding carries from one output token to the next, one row per sentence or per
// beam-search hypothesis; reorder() selects rows of every member.
struct TransformerDecoding {
  Tensor memory;                             // (B, S, E) the encoder's output
  nn::AttentionMask memory_mask;             // key_padding (B, S)
  std::vector<std::vector<int64_t>> tokens;  // (B, t) <s> and the tokens chosen so far (recompute)
  nn::TransformerDecoderCache cache;         // every decoder layer's keys and values (use_cache)
};

struct TransformerStep {
  Tensor logits;  // (B, V)
  Tensor alpha;   // undefined: cross_attention() gives the weights of a finished output
};

class TransformerSeq2SeqImpl : public nn::Module {
 public:
  explicit TransformerSeq2SeqImpl(const TransformerOptions& o) : options(o) {
    const int64_t E = o.d_model();
    src_emb = register_module("src_emb", nn::Embedding(
                                             nn::EmbeddingOptions(dates::kSourceVocab, E).padding_idx(dates::kPad)));
    tgt_emb = register_module("tgt_emb", nn::Embedding(
                                             nn::EmbeddingOptions(dates::kTargetVocab, E).padding_idx(dates::kPad)));
    for (nn::EmbeddingImpl* emb : {src_emb.get(), tgt_emb.get()}) {  // N(0, 1/E), the <pad> row 0
      nn::init::normal_(emb->weight, 0, 1 / std::sqrt(double(E)));
      std::fill(emb->weight.data() + dates::kPad * E, emb->weight.data() + (dates::kPad + 1) * E, heed::real(0));
      emb->weight.bump_version();
    }
    position = register_module("position", nn::SinusoidalPositionalEncoding(
                                               nn::SinusoidalPositionalEncodingOptions(E).max_len(dates::kMaxSourceLen + 1)));
    transformer = register_module("transformer", nn::Transformer(
        nn::TransformerOptions(E, o.nhead()).num_encoder_layers(o.encoder_layers()).num_decoder_layers(o.decoder_layers())
            .dim_feedforward(o.dim_feedforward()).dropout(o.dropout()).norm_first(true)));
    out = register_module("out", nn::Linear(E, dates::kTargetVocab));
  }

  // ids (B, T) -> sqrt(E) emb[ids] + PE(offset .. offset + T-1)   (B, T, E)
  Tensor embed(nn::EmbeddingImpl& emb, const IndexTensor& ids, int64_t offset = 0) {
    return position->forward(emb.forward(ids) * heed::real(std::sqrt(double(options.d_model()))), offset);
  }

  // src (B, S) with lengths (B) -> memory (B, S, E); `mask` gets the source's key_padding.
  Tensor encode(const IndexTensor& src, const std::vector<int64_t>& lengths, nn::AttentionMask& mask) {
    mask = nn::AttentionMask().key_padding(real_characters(lengths, src.size(1)));
    return transformer->encode(embed(*src_emb, src), mask);
  }

  // tgt_in (B, T) = <s> y_0 .. y_{T-2} -> logits (B, T, V) for y_0 .. y_{T-1}
  Tensor decode(const IndexTensor& tgt_in, const Tensor& memory, const nn::AttentionMask& memory_mask) {
    Tensor o = transformer->decode(embed(*tgt_emb, tgt_in), memory, nn::AttentionMask().causal(), memory_mask);
    return out->forward(o);
  }

  // Training (teacher forcing): logits (B, T, V) for the targets (B, T), every position at once.
  Tensor forward(const Batch& b) {
    nn::AttentionMask mask;
    Tensor memory = encode(b.src, b.lengths, mask);
    return decode(shift_right(b.tgt), memory, mask);
  }

  // The decoder interface of decode.h.
  TransformerDecoding begin(const Batch& b) {
    TransformerDecoding d;
    d.memory = encode(b.src, b.lengths, d.memory_mask);
    d.tokens.assign(b.src.size(0), std::vector<int64_t>());
    // As many target positions as the position table has: the recompute path's limit too.
    if (use_cache) d.cache = transformer->make_cache(b.src.size(0), position->options.max_len());
    return d;
  }
  // y_prev (B) -> logits (B, V) of the next token; d remembers y_prev.
  TransformerStep advance(const IndexTensor& y_prev, TransformerDecoding& d) {
    const int64_t B = d.tokens.size();
    if (use_cache) {  // only y_prev, at position t - 1 = cache.size()
      Tensor x = embed(*tgt_emb, y_prev.reshape({B, 1}), d.cache.size());  // (B, 1, E)
      Tensor o = transformer->decode(x, d.memory, nn::AttentionMask().causal(), d.memory_mask, &d.cache);
      return {heed::select(out->forward(o), 1, 0), Tensor()};  // (B, 1, V) -> (B, V)
    }
    std::vector<int64_t> ids;
    for (int64_t b = 0; b < B; ++b) {
      d.tokens[b].push_back(y_prev.data()[b]);
      ids.insert(ids.end(), d.tokens[b].begin(), d.tokens[b].end());
    }
    const int64_t t = d.tokens[0].size();
    Tensor logits = decode(IndexTensor(ids, {B, t}), d.memory, d.memory_mask);  // (B, t, V)
    return {heed::select(logits, 1, t - 1), Tensor()};
  }
  void reorder(TransformerDecoding& d, const IndexTensor& rows) const {
    std::vector<std::vector<int64_t>> tokens;
    for (int64_t i = 0; i < rows.numel(); ++i) tokens.push_back(d.tokens.at(rows.data()[i]));
    d.tokens = std::move(tokens);
    if (use_cache) d.cache.reorder(rows);
    d.memory = heed::index_select(d.memory, 0, rows);
    d.memory_mask = nn::AttentionMask().key_padding(heed::index_select(d.memory_mask.key_padding(), 0, rows));
  }

  // The cross-attention weights (1, H, T, S) of the last decoder layer while it produced
  // `tokens` (T of them) for the sentence `one` (B = 1): row t is what the query of output t
  // attended to. The layers before the last run as in decode(); the last layer's
  // cross-attention queries are rebuilt from its first sub-layer (the pre-norm equations of
  // transformer_decoder.h) and its weights asked for per head.
  Tensor cross_attention(const Batch& one, const std::vector<int64_t>& tokens) {
    heed::NoGradGuard no_grad;
    nn::AttentionMask mask;
    Tensor memory = encode(one.src, one.lengths, mask);
    const int64_t T = tokens.size();
    IndexTensor y(tokens, {1, T});
    Tensor x = embed(*tgt_emb, shift_right(y));  // (1, T, E)
    const nn::AttentionMask causal = nn::AttentionMask().causal();
    const nn::LayerStack<nn::TransformerDecoderLayer>& layers = *transformer->decoder->layers;
    const size_t N = layers.size();
    for (size_t i = 0; i + 1 < N; ++i) x = layers[i].forward(x, memory, causal, mask);
    nn::TransformerDecoderLayerImpl& last = layers[N - 1];
    Tensor h = last.norm1->forward(x);
    x = x + last.self_attn->forward(h, h, h, causal, {}, /*need_weights=*/false).output;  // x + SelfAttn(norm1(x))
    Tensor q = last.norm2->forward(x);
    return last.multihead_attn->forward(q, memory, memory, mask, {}, /*need_weights=*/true,
                                        /*average_attn_weights=*/false).weights;  // (1, H, T, S)
  }

  std::string repr() const override {
    return "TransformerSeq2Seq(d_model=" + std::to_string(options.d_model()) + ", nhead=" +
           std::to_string(options.nhead()) + ")";
  }

  TransformerOptions options;
  bool use_cache = true;  // decode through the decoder's KV cache; false: recompute every step
  nn::Embedding src_emb{nullptr}, tgt_emb{nullptr};
  nn::SinusoidalPositionalEncoding position{nullptr};
  nn::Transformer transformer{nullptr};  // "transformer.encoder.*", "transformer.decoder.*"
  nn::Linear out{nullptr};

 private:
  // y (B, T) -> (B, T): <s> y_0 .. y_{T-2}, the decoder's inputs for the outputs y_0 .. y_{T-1}
  static IndexTensor shift_right(const IndexTensor& y) {
    const int64_t B = y.size(0), T = y.size(1);
    std::vector<int64_t> ids(B * T);
    for (int64_t b = 0; b < B; ++b) {
      ids[b * T] = dates::kStart;
      for (int64_t t = 1; t < T; ++t) ids[b * T + t] = y.data()[b * T + t - 1];
    }
    return IndexTensor(ids, {B, T});
  }
};
HEED_MODULE(TransformerSeq2Seq);

}  // namespace seq2seq
