// decode.h - greedy decoding and beam search for the date translators: the LSTM Seq2Seq of
// seq2seq.h and the TransformerSeq2Seq of transformer_seq2seq.h. Both return, with the
// output, the attention weights alpha_tj of the output they chose when the model gives them
// per step: one row per output token t, one column per source character j.
//
//   greedy       y_t = argmax_v [log p(y_<t) + log p(v | y_<t, x)]       batched, one path each
//   beam search  keep the `width` best partial outputs by log p(y_<=t | x); an output that
//                ends in </s> is finished; the answer is the finished output with the best
//                length-normalised score log p(y | x) / |y|^alpha  (Wu et al. 2016 normalise
//                by a length penalty; alpha = 0 is none, 1 the mean per token)
//
// A model decodes through three calls on a state object of its own, one row per sentence
// (greedy) or per live hypothesis (beam search):
//   auto d = model.begin(batch);        encode the source; d holds what every step reuses
//   auto o = model.advance(y_prev, d);  y_prev (B) -> o.logits (B, V) for the next token,
//                                       o.alpha (B, S) or undefined; d moves on one token
//   model.reorder(d, rows);             row b of d becomes the old row rows[b]: beam search
//                                       calls it with each survivor's parent hypothesis
//
// Both pick among equal scores the lowest (hypothesis, token) index and compute the scores
// with the same arithmetic, so beam search with width 1 follows exactly greedy's path, and
// returns exactly its tokens, log-probability and attention (tests/test_translate.cpp).
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "seq2seq.h"

namespace seq2seq {

struct Translation {
  std::vector<int64_t> tokens;                // target ids, ending in </s> unless cut at max_len
  std::vector<std::vector<float>> attention;  // (T_out, S) alpha_tj over the real characters
  double log_prob = 0;                        // log p(tokens | source)
};

// One row of a (B, S) weight tensor, trimmed to the `len` real characters.
inline std::vector<float> attention_row(const std::vector<heed::real>& alpha, int64_t row, int64_t S, int64_t len) {
  return std::vector<float>(alpha.begin() + row * S, alpha.begin() + row * S + len);
}

// Greedy decoding of a whole batch; the model should be in eval mode.
template <class Model>
std::vector<Translation> greedy(Model& model, const Batch& b, int64_t max_len) {
  heed::NoGradGuard no_grad;
  heed::Bf16CacheScope keep;  // "medium": each weight rounded once for all the steps
  const int64_t B = b.src.size(0), S = b.src.size(1), V = dates::kTargetVocab;
  auto d = model.begin(b);
  std::vector<Translation> out(B);
  std::vector<int64_t> prev(B, dates::kStart);
  std::vector<bool> done(B, false);
  int64_t remaining = B;
  for (int64_t t = 0; t < max_len && remaining > 0; ++t) {
    auto o = model.advance(IndexTensor(prev), d);
    std::vector<heed::real> lp = heed::log_softmax(o.logits, 1).to_vector();  // (B, V)
    std::vector<heed::real> alpha = o.alpha.defined() ? o.alpha.to_vector() : std::vector<heed::real>();  // (B, S)
    for (int64_t i = 0; i < B; ++i) {
      if (done[i]) continue;
      int64_t best = 0;
      double best_score = out[i].log_prob + lp[i * V];
      for (int64_t v = 1; v < V; ++v) {
        double score = out[i].log_prob + lp[i * V + v];
        if (score > best_score) best = v, best_score = score;
      }
      out[i].tokens.push_back(best);
      if (!alpha.empty()) out[i].attention.push_back(attention_row(alpha, i, S, b.lengths[i]));
      out[i].log_prob = best_score;
      prev[i] = best;
      if (best == dates::kEnd) done[i] = true, --remaining;
    }
  }
  return out;
}

// Beam search for one sentence: `one` holds a single row (B = 1).
template <class Model>
Translation beam_search(Model& model, const Batch& one, int64_t width, int64_t max_len, double alpha = 1.0) {
  heed::NoGradGuard no_grad;
  heed::Bf16CacheScope keep;  // "medium": each weight rounded once for all the steps
  const int64_t S = one.src.size(1), V = dates::kTargetVocab, len = one.lengths[0];
  struct Hyp {
    Translation y;
    int64_t row;  // its parent's row in the state of the previous step
  };
  auto d = model.begin(one);
  std::vector<Hyp> alive = {{Translation(), 0}}, finished;
  for (int64_t t = 0; t < max_len && !alive.empty(); ++t) {
    const int64_t K = alive.size();
    // Row i of the state becomes live hypothesis i's: its parent's row, copied per survivor.
    std::vector<int64_t> rows, prev;
    for (const Hyp& h : alive) {
      rows.push_back(h.row);
      prev.push_back(h.y.tokens.empty() ? dates::kStart : h.y.tokens.back());
    }
    model.reorder(d, IndexTensor(rows));
    auto o = model.advance(IndexTensor(prev), d);
    std::vector<heed::real> lp = heed::log_softmax(o.logits, 1).to_vector();  // (K, V)
    std::vector<heed::real> a = o.alpha.defined() ? o.alpha.to_vector() : std::vector<heed::real>();  // (K, S)

    // The `width` best one-token extensions, by score, then by (hypothesis, token) index.
    std::vector<std::pair<double, int64_t>> cand;  // (score, i * V + v)
    for (int64_t i = 0; i < K; ++i)
      for (int64_t v = 0; v < V; ++v) cand.push_back({alive[i].y.log_prob + lp[i * V + v], i * V + v});
    const int64_t keep = std::min<int64_t>(width, cand.size());
    std::partial_sort(cand.begin(), cand.begin() + keep, cand.end(), [](const auto& p, const auto& q) {
      return p.first > q.first || (p.first == q.first && p.second < q.second);
    });
    std::vector<Hyp> next;
    for (int64_t k = 0; k < keep; ++k) {
      const int64_t i = cand[k].second / V, v = cand[k].second % V;
      Hyp h{alive[i].y, i};
      h.y.tokens.push_back(v);
      if (!a.empty()) h.y.attention.push_back(attention_row(a, i, S, len));
      h.y.log_prob = cand[k].first;
      (v == dates::kEnd ? finished : next).push_back(std::move(h));
    }
    alive = std::move(next);
  }
  for (Hyp& h : alive) finished.push_back(std::move(h));  // cut at max_len
  auto normalised = [&](const Translation& y) { return y.log_prob / std::pow(double(y.tokens.size()), alpha); };
  size_t best = 0;
  for (size_t k = 1; k < finished.size(); ++k)
    if (normalised(finished[k].y) > normalised(finished[best].y)) best = k;
  return finished[best].y;
}

}  // namespace seq2seq
