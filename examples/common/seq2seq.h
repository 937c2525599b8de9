// seq2seq.h - the attention encoder-decoder of examples/translate.cpp, written against
// <heed/heed.h> only (Bahdanau, Cho & Bengio 2015; Luong, Pham & Manning 2015).
//
//   x_j   = E_src[src_j]                                  source characters    (B, S, E)
//   h_j   = [LSTM_fwd(x)_j ; LSTM_bwd(x)_j]               bidirectional encoder (B, S, 2H)
//   s_0   = tanh(W_b [h_fwd_last ; h_bwd_first])          decoder start state   (B, Hd)
//   s_t   = LSTMCell([E_tgt[y_{t-1}] ; h~_{t-1}], s_{t-1})  input feeding (Luong sec. 3.3)
//   e_tj  = score(s_t, h_j)                               additive | dot | general | concat | local-p
//   alpha_tj = softmax_j(e_tj), padded j masked out;  c_t = sum_j alpha_tj h_j
//   h~_t  = tanh(W_c [c_t ; s_t])                         nn::LuongCombine      (B, Hd)
//   p(y_t | y_<t, x) = softmax(W_o h~_t + b_o)            logits                (B, V)
//
// Letters: B batch, S source length (padded), T target length, E embedding width, H encoder
// width per direction, Hd = 2H decoder width (so the dot score needs no projection), V
// target vocabulary. Every scorer is given the current state s_t as the query, as in Luong
// et al.; Bahdanau et al. score s_{t-1}: here the difference is only which state is passed.
//
// Decoding: greedy() and beam_search(); both return the attention weights of the output
// they chose, one row per output token. beam_search with width 1 is greedy() exactly
// (tests/test_translate.cpp checks it).
#pragma once
#include <heed/heed.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "dates.h"

namespace seq2seq {

using heed::IndexTensor;
using heed::Tensor;
namespace nn = heed::nn;

class ModelOptions {
 public:
  HEED_ARG(int64_t, embed) = 32;     // E
  HEED_ARG(int64_t, hidden) = 64;    // H per direction; Hd = 2H
  HEED_ARG(std::string, score) = "additive";
  HEED_ARG(int64_t, attn_dim) = 64;  // A (additive, concat)
  HEED_ARG(int64_t, window) = 8;     // D (local-p)
};

inline bool known_score(const std::string& s) {
  return s == "additive" || s == "dot" || s == "general" || s == "concat" || s == "local-p";
}

// ---- batches ----
struct Batch {
  IndexTensor src;               // (B, S) source ids, right-padded with <pad>
  std::vector<int64_t> lengths;  // (B) real characters per row
  IndexTensor tgt;               // (B, T) target ids ending in </s>, padded with <pad>
  int64_t tokens = 0;            // real source + target tokens
};

inline Batch make_batch(const std::vector<dates::Example>& data, const std::vector<int64_t>& rows) {
  std::vector<std::vector<int64_t>> src, tgt;
  for (int64_t r : rows) {
    src.push_back(dates::encode_source(data[r].source));
    tgt.push_back(dates::encode_target(data[r].target));
  }
  auto s = nn::utils::pad_sequence(src, /*batch_first=*/true, dates::kPad);  // ids (B, S), lengths
  auto t = nn::utils::pad_sequence(tgt, /*batch_first=*/true, dates::kPad);  // ids (B, T)
  Batch b;
  b.src = s.ids;
  b.lengths = s.lengths;
  b.tgt = t.ids;
  for (size_t i = 0; i < rows.size(); ++i) b.tokens += s.lengths[i] + t.lengths[i];
  return b;
}

// (B, S): 1 at the first lengths[b] positions of row b, 0 at its padding (a key_padding mask).
inline Tensor real_characters(const std::vector<int64_t>& lengths, int64_t S) {
  const int64_t B = lengths.size();
  std::vector<heed::real> real(B * S, 0);
  for (int64_t b = 0; b < B; ++b) std::fill(real.begin() + b * S, real.begin() + b * S + lengths[b], 1);
  return heed::from_vector(real, {B, S});
}

// ---- the scorer: one of heed's three attention modules behind one call ----
class ScorerImpl : public nn::Module {
 public:
  ScorerImpl(const std::string& score, int64_t Dq, int64_t Dk, int64_t A, int64_t window) : score_(score) {
    if (score == "additive")
      additive = register_module("additive", nn::AdditiveAttention(
                                                 nn::AdditiveAttentionOptions(Dq, Dk, A)));
    else if (score == "local-p")
      local = register_module("local", nn::LocalAttention(
                                           nn::LocalAttentionOptions(Dq, Dk).mode("local-p").window(window)));
    else
      luong = register_module("luong", nn::LuongAttention(
                                           nn::LuongAttentionOptions(Dq, Dk).score(score).attn_dim(A)));
  }
  // The key side of e_tj, computed once per source sentence: h (B, S, Dk) -> (B, S, P).
  Tensor precompute_keys(const Tensor& h) {
    if (additive) return additive->precompute_keys(h);
    if (local) return local->precompute_keys(h);
    return luong->precompute_keys(h);
  }
  // One decoder step: s (B, Dq) -> context (B, Dk), weights (B, S).
  nn::Attended forward(const Tensor& s, const Tensor& projected, const Tensor& h, const nn::AttentionMask& mask) {
    if (additive) return additive->forward_projected(s, projected, h, mask);
    if (local) return local->forward_projected(s, projected, h, mask);
    return luong->forward_projected(s, projected, h, mask);
  }
  std::string repr() const override { return "Scorer(score='" + score_ + "')"; }

  nn::AdditiveAttention additive{nullptr};
  nn::LuongAttention luong{nullptr};
  nn::LocalAttention local{nullptr};

 private:
  std::string score_;
};
HEED_MODULE(Scorer);

struct Encoded {
  Tensor keys;            // (B, S, 2H) h_j, 0 at padded steps
  Tensor projected;       // (B, S, P) the scorer's key side
  nn::AttentionMask mask; // key_padding (B, S): 1 = a real character
  Tensor s0;              // (B, Hd)
};

struct DecoderState {
  Tensor s, cell;  // (B, Hd) the LSTMCell's state s_t and memory
  Tensor feed;     // (B, Hd) h~_{t-1}, fed back in with the next input
};

struct Step {
  Tensor logits;  // (B, V)
  Tensor alpha;   // (B, S)
  DecoderState next;
};

// What decoding carries from one output token to the next (decode.h): the encoding and the
// recurrent state, one row per sentence or per beam-search hypothesis.
struct Decoding {
  Encoded e;
  DecoderState st;
};

class Seq2SeqImpl : public nn::Module {
 public:
  explicit Seq2SeqImpl(const ModelOptions& o) : options(o) {
    const int64_t E = o.embed(), H = o.hidden(), Hd = 2 * H;
    src_emb = register_module("src_emb", nn::Embedding(
                                             nn::EmbeddingOptions(dates::kSourceVocab, E).padding_idx(dates::kPad)));
    tgt_emb = register_module("tgt_emb", nn::Embedding(
                                             nn::EmbeddingOptions(dates::kTargetVocab, E).padding_idx(dates::kPad)));
    encoder = register_module("encoder", nn::LSTM(nn::LSTMOptions(E, H).bidirectional(true)));
    bridge = register_module("bridge", nn::Linear(2 * H, Hd));
    decoder = register_module("decoder", nn::LSTMCell(E + Hd, Hd));
    scorer = register_module("scorer", Scorer(o.score(), Hd, 2 * H, o.attn_dim(), o.window()));
    combine = register_module("combine", nn::LuongCombine(nn::LuongCombineOptions(2 * H, Hd, Hd)));
    out = register_module("out", nn::Linear(Hd, dates::kTargetVocab));
  }

  // src (B, S) with lengths (B) -> the encoder states and what every decoder step reuses.
  Encoded encode(const IndexTensor& src, const std::vector<int64_t>& lengths) {
    const int64_t B = src.size(0), S = src.size(1), H = options.hidden();
    Tensor x = src_emb->forward(src);                             // (B, S, E)
    auto [h, h_n, c_n] = encoder->forward(x, {}, lengths);        // (B, S, 2H), (2, B, H)
    Tensor last = h_n.transpose(0, 1).reshape({B, 2 * H});       // (B, 2H) [fwd last ; bwd first]
    Encoded e;
    e.keys = h;
    e.projected = scorer->precompute_keys(h);
    e.mask = nn::AttentionMask().key_padding(real_characters(lengths, S));
    e.s0 = heed::tanh(bridge->forward(last));
    return e;
  }

  DecoderState start(const Encoded& e) const {
    Tensor z = heed::zeros(e.s0.shape());  // (B, Hd)
    return {e.s0, z, z};
  }

  // y_prev (B) -> logits for y_t (B, V), attention (B, S), the next state.
  Step step(const IndexTensor& y_prev, const DecoderState& st, const Encoded& e) {
    Tensor x = heed::cat({tgt_emb->forward(y_prev), st.feed}, -1);                  // (B, E + Hd)
    auto [s, cell] = decoder->forward(x, std::make_tuple(st.s, st.cell));           // (B, Hd) each
    auto [c, alpha] = scorer->forward(s, e.projected, e.keys, e.mask);               // (B, 2H), (B, S)
    Tensor h_tilde = combine->forward(c, s);                                         // (B, Hd)
    return {out->forward(h_tilde), alpha, {s, cell, h_tilde}};
  }

  // The decoder interface of decode.h: begin() encodes, advance() takes one output token,
  // reorder() makes row b of every per-row tensor the old row rows[b].
  Decoding begin(const Batch& b) {
    Encoded e = encode(b.src, b.lengths);
    DecoderState st = start(e);
    return {e, st};
  }
  // y_prev (B) -> logits (B, V) and attention (B, S) for the next token; d moves on one token.
  Step advance(const IndexTensor& y_prev, Decoding& d) {
    Step o = step(y_prev, d.st, d.e);
    d.st = o.next;
    return o;
  }
  void reorder(Decoding& d, const IndexTensor& rows) const {
    auto pick = [&](const Tensor& t) { return t.defined() ? heed::index_select(t, 0, rows) : t; };
    d.st = {pick(d.st.s), pick(d.st.cell), pick(d.st.feed)};
    d.e.keys = pick(d.e.keys), d.e.projected = pick(d.e.projected), d.e.s0 = pick(d.e.s0);
    d.e.mask = nn::AttentionMask().key_padding(pick(d.e.mask.key_padding()));
  }

  // Training: logits (B, T, V) for the targets (B, T). Each position's input is the true
  // previous token with probability teacher_forcing, else the model's own argmax.
  Tensor forward(const Batch& b, double teacher_forcing, std::mt19937_64& rng) {
    const int64_t B = b.tgt.size(0), T = b.tgt.size(1);
    Encoded e = encode(b.src, b.lengths);
    DecoderState st = start(e);
    std::vector<int64_t> prev(B, dates::kStart);
    std::uniform_real_distribution<double> coin(0, 1);
    std::vector<Tensor> logits;
    heed::Bf16CacheScope keep;  // "medium": the decoder's weights rounded once for all T steps
    for (int64_t t = 0; t < T; ++t) {
      Step out_t = step(IndexTensor(prev), st, e);
      logits.push_back(out_t.logits);
      st = out_t.next;
      IndexTensor guess = heed::argmax(out_t.logits.detach(), 1);  // (B)
      for (int64_t i = 0; i < B; ++i)
        prev[i] = teacher_forcing >= 1 || coin(rng) < teacher_forcing ? b.tgt.data()[i * T + t] : guess[i];
    }
    return heed::stack(logits, 1);  // (B, T, V)
  }

  std::string repr() const override { return "Seq2Seq(score='" + options.score() + "')"; }

  ModelOptions options;
  nn::Embedding src_emb{nullptr}, tgt_emb{nullptr};
  nn::LSTM encoder{nullptr};
  nn::Linear bridge{nullptr};
  nn::LSTMCell decoder{nullptr};
  Scorer scorer{nullptr};
  nn::LuongCombine combine{nullptr};
  nn::Linear out{nullptr};
};
HEED_MODULE(Seq2Seq);

}  // namespace seq2seq
