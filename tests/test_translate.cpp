// test_translate.cpp - the parts of examples/translate.cpp that must hold exactly: the date
// data (no string means two dates, the splits share no day) and the decoders, for the LSTM
// and the Transformer model (beam search with width 1 is greedy decoding; a padded batch
// decodes as each sentence alone; beam search's scores are those of its outputs, so each
// hypothesis kept its parent's state when the state was reordered; the Transformer's
// decoding through its key/value cache picks the same tokens, with the same logits at every
// step, as recomputing the whole prefix, greedy and beam search).
// The training run itself is smoke-tested by `make test` (translate --smoke).
#include <map>
#include <set>

#include "../examples/common/decode.h"
#include "../examples/common/transformer_seq2seq.h"
#include <heed/core/elementwise.h>
#include <heed/core/random.h>
#include "helpers.h"

using namespace heed;

// Rows 0 .. n-1 of a data set.
static std::vector<int64_t> first(int64_t n) {
  std::vector<int64_t> rows(n);
  for (int64_t i = 0; i < n; ++i) rows[i] = i;
  return rows;
}

// Sentence i decoded alone, greedily and by beam search of width 1, which must take the
// same path with the same arithmetic: equal tokens, log p and attention rows. Returns greedy's.
template <class Model>
static seq2seq::Translation greedy_equals_beam1(Model& model, const dates::Splits& data, int64_t i) {
  CAPTURE(i);
  seq2seq::Batch one = seq2seq::make_batch(data.test, {i});
  seq2seq::Translation g = seq2seq::greedy(*model, one, 12)[0];
  seq2seq::Translation b = seq2seq::beam_search(*model, one, 1, 12);
  REQUIRE(g.tokens.size() > 0);
  CHECK(b.tokens == g.tokens);
  CHECK(b.log_prob == g.log_prob);
  CHECK(b.attention == g.attention);
  return g;
}

// The options of a tiny Transformer translator, after seeding heed's generator with `seed`.
static seq2seq::TransformerOptions small_transformer(uint64_t seed) {
  manual_seed(seed);
  return seq2seq::TransformerOptions().d_model(16).nhead(4).encoder_layers(2).decoder_layers(2).dim_feedforward(24);
}

TEST_CASE("translate data: the README's example formats, weekdays, ISO targets") {
  dates::Date d{2021, 3, 3};
  CHECK(dates::format(d, "_MMM d yy") == "mar 3 21");
  CHECK(dates::format(d, "dd.mm.yyyy") == "03.03.2021");
  CHECK(dates::format(d, "the o of MMMM, yyyy") == "the 3rd of March, 2021");
  CHECK(dates::format(d, "WWWW, d MMMM yyyy") == "Wednesday, 3 March 2021");  // 2021-03-03 was a Wednesday
  CHECK(dates::format({1999, 12, 12}, "WWW, d MMM yyyy") == "Sun, 12 Dec 1999");
  CHECK(dates::ordinal(11) == "11th");
  CHECK(dates::ordinal(22) == "22nd");
  CHECK(dates::iso(dates::civil_from_days(dates::days_from_civil({2049, 12, 31}))) == "2049-12-31");
  CHECK(dates::num_days() == 36525);
  CHECK(dates::decode_target(dates::encode_target("2021-03-03")) == "2021-03-03");
  CHECK_THROWS_AS(dates::encode_source("caf\xC3\xA9"), std::invalid_argument);
}

TEST_CASE("translate data: no source string means two dates, and the splits share no day") {
  std::map<std::string, std::string> meaning;
  int64_t clashes = 0;
  for (int64_t k = 0; k < dates::num_days(); k += 7) {  // every 7th day, every format
    dates::Date d = dates::civil_from_days(dates::first_day() + k);
    for (const std::string& f : dates::formats()) {
      auto [it, fresh] = meaning.emplace(dates::format(d, f), dates::iso(d));
      clashes += !fresh && it->second != dates::iso(d);
    }
  }
  CHECK(clashes == 0);
  CHECK(dates::formats().size() >= 36);

  dates::Splits s = dates::make_splits(1, 5000, 1000, 1000);
  std::set<std::string> train, test;
  for (const auto& e : s.train) train.insert(e.target);
  for (const auto& e : s.test) test.insert(e.target);
  for (const auto& e : s.valid) CHECK_FALSE(test.count(e.target));
  int64_t shared = 0;
  for (const auto& t : test) shared += train.count(t);
  CHECK(shared == 0);
  CHECK(test.size() == 1000);  // 1,000 different test days
  CHECK(dates::make_splits(1, 5000, 1000, 1000).train[3].source == s.train[3].source);  // deterministic
}

TEST_CASE("translate decoders: beam search with width 1 is exactly greedy, for every scorer") {
  dates::Splits data = dates::make_splits(3, 1, 1, 24);
  for (const char* score : {"additive", "dot", "general", "concat", "local-p"}) {
    CAPTURE(score);
    manual_seed(7);
    seq2seq::Seq2Seq model(seq2seq::ModelOptions().embed(8).hidden(12).attn_dim(10).window(3).score(score));
    model->eval();
    std::vector<int64_t> all;
    for (int64_t i = 0; i < 24; ++i) all.push_back(i);
    std::vector<seq2seq::Translation> batched = seq2seq::greedy(*model, seq2seq::make_batch(data.test, all), 12);
    for (int64_t i = 0; i < 24; ++i) {
      seq2seq::Translation g = greedy_equals_beam1(model, data, i);
      // and the padded batch decodes each sentence as it does alone (the key padding mask)
      CHECK(batched[i].tokens == g.tokens);
      CHECK(batched[i].log_prob == doctest::Approx(g.log_prob).epsilon(1e-4));
      REQUIRE(batched[i].attention.size() == g.attention.size());
      for (size_t t = 0; t < g.attention.size(); ++t) {
        REQUIRE(batched[i].attention[t].size() == data.test[i].source.size());
        for (size_t j = 0; j < g.attention[t].size(); ++j)
          CHECK(batched[i].attention[t][j] == doctest::Approx(g.attention[t][j]).epsilon(1e-4));
      }
    }
    // a wider beam returns one attention row per output token, weights in [0, 1]
    seq2seq::Translation b4 = seq2seq::beam_search(*model, seq2seq::make_batch(data.test, {0}), 4, 12);
    REQUIRE(b4.attention.size() == b4.tokens.size());
    for (const auto& row : b4.attention)
      for (float a : row) CHECK((a >= 0 && a <= 1));
  }
}

TEST_CASE("translate decoders: the Transformer's beam width 1 is exactly greedy; a padded batch decodes as alone") {
  dates::Splits data = dates::make_splits(5, 1, 1, 16);
  seq2seq::TransformerSeq2Seq model(small_transformer(11));
  model->eval();
  std::vector<seq2seq::Translation> batched = seq2seq::greedy(*model, seq2seq::make_batch(data.test, first(16)), 12);
  for (int64_t i = 0; i < 16; ++i) {
    CAPTURE(i);
    seq2seq::Translation g = greedy_equals_beam1(model, data, i);
    CHECK(g.attention.empty());  // the Transformer's come from cross_attention(), after decoding
    CHECK(batched[i].tokens == g.tokens);
    CHECK(batched[i].log_prob == doctest::Approx(g.log_prob).epsilon(1e-4));
    // the last layer's cross-attention: one row per output, a distribution over the real characters
    Tensor w = model->cross_attention(seq2seq::make_batch(data.test, {i}), g.tokens);  // (1, H, T, S)
    REQUIRE(w.shape() == Shape{1, 4, int64_t(g.tokens.size()), int64_t(data.test[i].source.size())});
    for (real r : sum(w, 3).to_vector()) CHECK(r == doctest::Approx(1).epsilon(1e-5));
  }
}

TEST_CASE("translate decoders: beam search reorders the state by parent; its score is the output's log p") {
  dates::Splits data = dates::make_splits(9, 1, 1, 6);
  manual_seed(3);
  seq2seq::TransformerSeq2Seq transformer(
      seq2seq::TransformerOptions().d_model(16).nhead(2).encoder_layers(1).decoder_layers(2).dim_feedforward(24));
  seq2seq::Seq2Seq lstm(seq2seq::ModelOptions().embed(8).hidden(12).attn_dim(10));
  transformer->eval(), lstm->eval();
  int64_t differs = 0;  // beams whose answer is not greedy's: their path went through reordered rows
  for (int64_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    seq2seq::Batch one = seq2seq::make_batch(data.test, {i});
    for (int64_t width : {2, 5}) {
      seq2seq::Translation bt = seq2seq::beam_search(*transformer, one, width, 12, 0.0);
      seq2seq::Translation bl = seq2seq::beam_search(*lstm, one, width, 12, 0.0);
      // teacher-forced scoring of each answer, through the models' training forward passes
      std::vector<dates::Example> ex = {{data.test[i].source, ""}};
      auto scored = [&](const seq2seq::Translation& y) {
        seq2seq::Batch b = seq2seq::make_batch(ex, {0});
        b.tgt = IndexTensor(y.tokens, {1, int64_t(y.tokens.size())});
        return b;
      };
      seq2seq::Batch st = scored(bt), sl = scored(bl);
      Tensor lt = log_softmax(transformer->forward(st), 2);  // (1, T, V)
      std::mt19937_64 rng(1);
      Tensor ll = log_softmax(lstm->forward(sl, 1.0, rng), 2);
      auto total = [](const Tensor& lp, const std::vector<int64_t>& y) {
        double s = 0;
        for (size_t t = 0; t < y.size(); ++t) s += lp.at({0, int64_t(t), y[t]});
        return s;
      };
      CHECK(bt.log_prob == doctest::Approx(total(lt, bt.tokens)).epsilon(1e-4));
      CHECK(bl.log_prob == doctest::Approx(total(ll, bl.tokens)).epsilon(1e-4));
      differs += bt.tokens != seq2seq::greedy(*transformer, one, 12)[0].tokens;
      differs += bl.tokens != seq2seq::greedy(*lstm, one, 12)[0].tokens;
    }
  }
  CHECK(differs > 0);
}

// Forwards decode.h's interface to a TransformerSeq2Seq and keeps every step's logits.
struct RecordedSteps {
  seq2seq::TransformerSeq2Seq& model;
  std::vector<std::vector<real>> logits;  // one (B, V) per advance()
  seq2seq::TransformerDecoding begin(const seq2seq::Batch& b) { return model->begin(b); }
  seq2seq::TransformerStep advance(const IndexTensor& y_prev, seq2seq::TransformerDecoding& d) {
    seq2seq::TransformerStep o = model->advance(y_prev, d);
    logits.push_back(o.logits.to_vector());
    return o;
  }
  void reorder(seq2seq::TransformerDecoding& d, const IndexTensor& rows) const { model->reorder(d, rows); }
};

TEST_CASE("translate decoders: the Transformer's cached decoding equals recomputing, tokens and every step's logits") {
  dates::Splits data = dates::make_splits(13, 1, 1, 12);
  seq2seq::TransformerSeq2Seq model(small_transformer(5));
  model->eval();
  seq2seq::Batch batch = seq2seq::make_batch(data.test, first(12));
  REQUIRE(batch.src.size(1) > *std::min_element(batch.lengths.begin(), batch.lengths.end()));  // padded
  // Runs `decode` with the cache and without; both must pick the same tokens with logits
  // within 1e-5 at every step, and the run must take several steps.
  auto same = [&](auto decode) {
    RecordedSteps cached{model, {}}, recomputed{model, {}};
    model->use_cache = true;
    auto a = decode(cached);
    model->use_cache = false;
    auto b = decode(recomputed);
    model->use_cache = true;
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].tokens == b[i].tokens);
      CHECK(a[i].log_prob == doctest::Approx(b[i].log_prob).epsilon(1e-5));
    }
    REQUIRE(cached.logits.size() == recomputed.logits.size());
    CHECK(cached.logits.size() >= 5);
    double worst = 0;
    for (size_t t = 0; t < cached.logits.size(); ++t) {
      REQUIRE(cached.logits[t].size() == recomputed.logits[t].size());
      for (size_t k = 0; k < cached.logits[t].size(); ++k)
        worst = std::max(worst, std::abs(double(cached.logits[t][k]) - recomputed.logits[t][k]));
    }
    CHECK(worst <= 1e-5);
  };
  SUBCASE("greedy, the padded batch") {
    same([&](RecordedSteps& m) { return seq2seq::greedy(m, batch, 12); });
  }
  SUBCASE("beam width 3, each sentence: the cache's rows follow their parent hypotheses") {
    for (int64_t i = 0; i < 12; ++i) {
      CAPTURE(i);
      seq2seq::Batch one = seq2seq::make_batch(data.test, {i});
      same([&](RecordedSteps& m) { return std::vector<seq2seq::Translation>{seq2seq::beam_search(m, one, 3, 12, 0.0)}; });
    }
  }
  SUBCASE("beam width 1 with the cache is exactly greedy with the cache") {
    model->use_cache = true;
    for (int64_t i = 0; i < 12; ++i) greedy_equals_beam1(model, data, i);
  }
}
