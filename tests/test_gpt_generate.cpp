// test_gpt_generate.cpp - examples/common/gpt.h's generation loop: greedy generation equals a
// hand-written argmax loop over the model's logits, across the crop to the last block_size
// tokens (learned and rotary positions); the prompt is kept; the same seed repeats sampled
// text; the model's training mode is restored, a throwing step included; a bad prompt is an
// error. GPTConfig refuses what cannot build a model; a model with no blocks generates. The cached step
// (gpt::cached_step) equals recompute: logits to 1e-5 at every step and the same sampled tokens
// over 300 steps that cross block_size, for learned, sinusoidal and rotary positions, batch 1
// and 3; it starts afresh on a sequence that does not extend its cache; bad calls are errors.
#include <algorithm>
#include <type_traits>
#include <cmath>
#include <string>
#include <vector>

#include "../examples/common/gpt.h"
#include "helpers.h"

using namespace heed;
using heed::test::error_of;

namespace {

gpt::GPTConfig tiny(const std::string& pos) {
  return gpt::GPTConfig().block_size(8).vocab_size(11).n_layer(2).n_head(2).n_embd(16).dropout(0.1).pos(pos);
}

// The reference: for each new token, run the model on at most the last block_size tokens of
// the row and take the argmax of the last position's logits.
std::vector<int64_t> greedy_by_hand(gpt::GPT& model, std::vector<int64_t> ids, int64_t n) {
  NoGradGuard no_grad;
  model->eval();
  const int64_t block = model->config().block_size();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t T = std::min<int64_t>(ids.size(), block);
    const Tensor logits = model->forward(IndexTensor(std::vector<int64_t>(ids.end() - T, ids.end()), {1, T}));
    const int64_t V = logits.size(2);
    const real* last = logits.data() + (T - 1) * V;
    ids.push_back(std::max_element(last, last + V) - last);
  }
  model->train();
  return ids;
}

}  // namespace

TEST_CASE("gpt generate: greedy equals an argmax loop, past the block's crop") {
  for (const std::string pos : {"learned", "sinusoidal", "rope"}) {
    manual_seed(1);
    gpt::GPT model(tiny(pos));
    const std::vector<int64_t> prompt = {3, 1, 4, 1, 5};
    const int64_t n = 20;  // 25 tokens: the context slides 17 times past block_size 8
    const IndexTensor out = gpt::generate(*model, IndexTensor(prompt, {1, 5}), n, nn::SamplingOptions().temperature(0),
                                          gpt::recompute_step(*model));
    INFO("pos ", pos);
    CHECK(out.shape() == Shape({1, 25}));
    CHECK(out.vec() == greedy_by_hand(model, prompt, n));
    CHECK(model->is_training());  // restored
  }
}

TEST_CASE("gpt generate: rows are decoded together, the prompt is kept, a seed repeats the samples") {
  manual_seed(2);
  gpt::GPT model(tiny("learned"));
  const IndexTensor prompt({1, 2, 3, 7, 7, 7}, {2, 3});
  const auto o = nn::SamplingOptions().temperature(1.2).top_k(6).top_p(0.9);
  manual_seed(9);
  const IndexTensor a = gpt::generate(*model, prompt, 12, o, gpt::recompute_step(*model));
  manual_seed(9);
  const IndexTensor b = gpt::generate(*model, prompt, 12, o, gpt::recompute_step(*model));
  CHECK(a.shape() == Shape({2, 15}));
  CHECK(a.vec() == b.vec());
  for (int64_t j = 0; j < 3; ++j) {
    CHECK(a.data()[j] == prompt.data()[j]);
    CHECK(a.data()[15 + j] == prompt.data()[3 + j]);
  }
  // greedy on two equal rows gives two equal rows
  const IndexTensor twice = gpt::generate(*model, IndexTensor({4, 2, 4, 2}, {2, 2}), 10, nn::SamplingOptions().temperature(0),
                                          gpt::recompute_step(*model));
  CHECK(std::vector<int64_t>(twice.vec().begin(), twice.vec().begin() + 12) ==
        std::vector<int64_t>(twice.vec().begin() + 12, twice.vec().end()));
  model->eval();
  gpt::generate(*model, prompt, 1, o, gpt::recompute_step(*model));
  CHECK(!model->is_training());  // an eval model stays in eval
}

TEST_CASE("gpt generate: the step sees the whole sequence; recompute crops it to block_size") {
  manual_seed(3);
  gpt::GPT model(tiny("learned"));
  std::vector<int64_t> lengths;
  const gpt::Step inner = gpt::recompute_step(*model);
  const gpt::Step spy = [&](const IndexTensor& seq) {
    lengths.push_back(seq.size(1));
    return inner(seq);
  };
  gpt::generate(*model, IndexTensor({1, 2}, {1, 2}), 10, nn::SamplingOptions(), spy);
  CHECK(lengths == std::vector<int64_t>({2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  CHECK(gpt::last_columns(IndexTensor({1, 2, 3, 4, 5, 6}, {2, 3}), 2).vec() == std::vector<int64_t>({2, 3, 5, 6}));
  CHECK(gpt::last_columns(IndexTensor({1, 2, 3, 4, 5, 6}, {2, 3}), 9).vec() == std::vector<int64_t>({1, 2, 3, 4, 5, 6}));
  CHECK(error_of([&] { gpt::generate(*model, IndexTensor({1, 2}, {2}), 3, nn::SamplingOptions(), inner); }) ==
        "generate: the prompt must be (B, T0) with B, T0 >= 1, got shape (2)");
}

namespace {

gpt::GPTConfig window64(const std::string& pos) {
  return gpt::GPTConfig().block_size(64).vocab_size(13).n_layer(2).n_head(2).n_embd(16).dropout(0.1).pos(pos);
}

// B rows of `length` tokens drawn from heed's generator (row b differs from row 0).
IndexTensor random_prompt(int64_t B, int64_t length, int64_t V) {
  const Tensor u = rand({B, length});
  std::vector<int64_t> ids(B * length);
  for (int64_t i = 0; i < B * length; ++i) ids[i] = std::min<int64_t>(V - 1, int64_t(u.data()[i] * real(V)));
  return IndexTensor(ids, {B, length});
}

}  // namespace

TEST_CASE("gpt cached_step: the logits equal recompute's at every step, across block_size") {
  // block 64, prompt 10, 300 steps: the sequence crosses the block at step 54 and the window
  // is re-encoded 256 times; two layers, so rotary keys above the first layer depend on it.
  for (const std::string pos : {"learned", "sinusoidal", "rope"})
    for (const int64_t B : {1, 3}) {
      INFO("pos ", pos, ", batch ", B);
      manual_seed(11);
      gpt::GPT model(window64(pos));
      model->eval();
      const gpt::Step recompute = gpt::recompute_step(*model), cached = gpt::cached_step(*model, B);
      const auto sampling = nn::SamplingOptions().temperature(1.3);  // wander: the rows differ
      double worst = 0;
      const gpt::Step both = [&](const IndexTensor& seq) {  // generate samples from recompute's
        const Tensor want = recompute(seq), got = cached(seq);  // (B, V) each
        REQUIRE(got.shape() == want.shape());
        for (int64_t j = 0; j < want.numel(); ++j)
          worst = std::max(worst, double(std::abs(got.data()[j] - want.data()[j])));
        return want;
      };
      const IndexTensor seq = gpt::generate(*model, random_prompt(B, 10, 13), 300, sampling, both);
      CHECK(seq.size(1) == 310);
      CHECK(worst <= 1e-5);
    }
}

TEST_CASE("gpt cached_step: keys cached under other weights are refused, then re-encoded") {
  manual_seed(12);
  gpt::GPT model(window64("learned"));
  model->eval();
  const gpt::Step recompute = gpt::recompute_step(*model), cached = gpt::cached_step(*model, 2);
  const IndexTensor prompt = random_prompt(2, 10, 13);  // (2, 10)
  std::vector<int64_t> ids;                               // (2, 11): the prompt, one more token
  for (int64_t b = 0; b < 2; ++b) {
    ids.insert(ids.end(), prompt.data() + b * 10, prompt.data() + (b + 1) * 10);
    ids.push_back(b + 1);
  }
  const IndexTensor seq(ids, {2, 11});
  (void)cached(prompt);
  int changed = 0;
  for (auto& [name, p] : model->named_parameters())
    if (name.find("c_attn.weight") != std::string::npos) {
      heed::NoGradGuard no_grad;
      p.mul_(real(1.01));  // what an optimizer step does: a write that bumps the version
      ++changed;
    }
  REQUIRE(changed == 2);
  CHECK_THROWS_WITH(cached(seq), doctest::Contains("weights changed since the cache was filled"));
  const Tensor want = recompute(seq), got = cached(seq);  // the failed step forgot the caches
  double worst = 0;
  for (int64_t j = 0; j < want.numel(); ++j)
    worst = std::max(worst, double(std::abs(got.data()[j] - want.data()[j])));
  CHECK(worst <= 1e-5);
}

TEST_CASE("gpt cached_step: the same seed samples the same tokens as recompute over 300 steps") {
  for (const std::string pos : {"learned", "sinusoidal", "rope"})
    for (const int64_t B : {1, 2}) {
      INFO("pos ", pos, ", batch ", B);
      manual_seed(12);
      gpt::GPT model(window64(pos));
      const IndexTensor prompt = random_prompt(B, 10, 13);
      const auto sampling = nn::SamplingOptions().temperature(0.9).top_k(8);
      manual_seed(5);
      const IndexTensor a = gpt::generate(*model, prompt, 300, sampling, gpt::recompute_step(*model));
      manual_seed(5);
      const IndexTensor b = gpt::generate(*model, prompt, 300, sampling, gpt::cached_step(*model, B));
      CHECK(b.shape() == Shape({B, 310}));
      CHECK(a.vec() == b.vec());
      CHECK(model->is_training());  // restored
    }
}

TEST_CASE("gpt cached_step: a sequence that does not extend the cache starts afresh; bad calls are errors") {
  manual_seed(13);
  gpt::GPT model(tiny("rope"));
  model->eval();
  const gpt::Step recompute = gpt::recompute_step(*model), cached = gpt::cached_step(*model, 1);
  auto agree = [&](const std::vector<int64_t>& ids) {
    const IndexTensor seq(ids, {1, int64_t(ids.size())});
    const Tensor want = recompute(seq), got = cached(seq);
    double worst = 0;
    for (int64_t j = 0; j < want.numel(); ++j) worst = std::max(worst, double(std::abs(got.data()[j] - want.data()[j])));
    return worst <= 1e-5;
  };
  CHECK(agree({1, 2, 3}));
  CHECK(agree({1, 2, 3, 4}));     // extends: only 4 is fed
  CHECK(agree({1, 2, 3, 4}));     // the same sequence again: re-encoded, not fed twice
  CHECK(agree({1, 2, 9, 4, 5}));  // a different prefix: re-encoded
  CHECK(agree({7}));              // shorter: a new prompt
  CHECK(agree({3, 1, 4, 1, 5, 9, 2, 6, 5, 3}));  // longer than block 8: the last 8
  CHECK(agree({3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}));
  // the step works from one cache per block: a second generate with the same step equals a fresh one
  const auto greedy = nn::SamplingOptions().temperature(0);
  const gpt::Step shared = gpt::cached_step(*model, 1);
  const IndexTensor p1({2, 7, 1}, {1, 3}), p2({5}, {1, 1});
  gpt::generate(*model, p1, 12, greedy, shared);
  CHECK(gpt::generate(*model, p2, 12, greedy, shared).vec() ==
        gpt::generate(*model, p2, 12, greedy, gpt::recompute_step(*model)).vec());

  CHECK(error_of([&] { cached(IndexTensor({1, 2, 3, 4}, {2, 2})); }) ==
        "cached_step: seq must be (batch, t) = (1, t >= 1), got shape (2,2)");
  CHECK(error_of([&] { gpt::cached_step(*model, 0); }) == "cached_step: batch must be >= 1, got 0");
  model->train();
  CHECK(error_of([&] { cached(IndexTensor({1, 2}, {1, 2})); }) ==
        "cached_step: the model is in training mode (dropout would differ per call): call model->eval()");
}

TEST_CASE("gpt GPTConfig: a config that cannot build a model is refused, naming the field") {
  auto refusal = [](const gpt::GPTConfig& c) { return error_of([&] { gpt::GPT model(c); }); };
  const gpt::GPTConfig ok = tiny("learned");
  CHECK(refusal(gpt::GPTConfig(ok).n_head(0)) == "GPTConfig: n_head must be >= 1, got 0");  // was SIGFPE
  CHECK(refusal(gpt::GPTConfig(ok).n_head(3)) == "GPTConfig: n_embd (16) must be divisible by n_head (3)");
  CHECK(refusal(gpt::GPTConfig(ok).block_size(0)) == "GPTConfig: block_size must be >= 1, got 0");
  CHECK(refusal(gpt::GPTConfig(ok).vocab_size(0)) == "GPTConfig: vocab_size must be >= 1, got 0");
  CHECK(refusal(gpt::GPTConfig(ok).n_embd(0)) == "GPTConfig: n_embd must be >= 1, got 0");
  CHECK(refusal(gpt::GPTConfig(ok).n_layer(-1)) == "GPTConfig: n_layer must be >= 0, got -1");
  CHECK(refusal(gpt::GPTConfig(ok).dropout(1)) == "GPTConfig: dropout must be in [0, 1), got 1");
  CHECK(refusal(gpt::GPTConfig(ok).pos("alibi")) ==
        "GPTConfig: pos must be one of learned, sinusoidal, rope; got 'alibi'");
  CHECK(refusal(gpt::GPTConfig(ok).pos("rope").n_embd(6).n_head(2)) ==
        "GPTConfig: pos 'rope' needs an even head width n_embd / n_head, got 3");
  // A config is a value: a copy changed leaves the original as it was.
  gpt::GPTConfig copy = ok;
  copy.n_head(4);
  CHECK(ok.n_head() == 2);
}

TEST_CASE("gpt: a model with no blocks (n_layer 0) runs, caches and generates, as nanoGPT's does") {
  for (const std::string pos : {"learned", "sinusoidal", "rope"}) {
    INFO("pos ", pos);
    manual_seed(14);
    gpt::GPT model(tiny(pos).n_layer(0));
    CHECK(model->transformer->h->size() == 0);
    const IndexTensor prompt({3, 1, 4}, {1, 3});
    CHECK(model->forward(prompt).shape() == Shape({1, 3, 11}));
    const auto greedy = nn::SamplingOptions().temperature(0);
    const IndexTensor a = gpt::generate(*model, prompt, 12, greedy, gpt::recompute_step(*model));
    const IndexTensor b = gpt::generate(*model, prompt, 12, greedy, gpt::cached_step(*model, 1));
    CHECK(a.shape() == Shape({1, 15}));
    CHECK(a.vec() == b.vec());
  }
}

TEST_CASE("gpt: GPT cannot be copied; a throwing generate or cached step leaves the state as it was") {
  // A copy would share every submodule (shared_ptr): deleted, not silently aliased.
  static_assert(!std::is_copy_constructible_v<gpt::GPTImpl> && !std::is_copy_assignable_v<gpt::GPTImpl>);
  manual_seed(15);
  gpt::GPT model(tiny("learned"));
  const IndexTensor prompt({3, 1, 4}, {1, 3});
  for (const bool training : {true, false}) {
    const gpt::Step throws_later = [&, calls = 0](const IndexTensor& seq) mutable {
      if (++calls == 3) heed::fail("test step", "fails at its third call");
      return gpt::recompute_step(*model)(seq);
    };
    model->train(training);
    CHECK(error_of([&] { gpt::generate(*model, prompt, 5, nn::SamplingOptions(), throws_later); }) ==
          "test step: fails at its third call");
    CHECK(model->is_training() == training);
    CHECK((*model->transformer->h)[0].attn->c_attn->is_training() == training);
  }
  // A cached step whose call throws (a token outside the vocabulary) starts afresh after it.
  model->eval();
  const gpt::Step cached = gpt::cached_step(*model, 1), recompute = gpt::recompute_step(*model);
  cached(IndexTensor({1, 2}, {1, 2}));
  CHECK(!error_of([&] { cached(IndexTensor({1, 2, 99}, {1, 3})); }).empty());
  const IndexTensor next({1, 2, 5}, {1, 3});
  CHECK(test::allclose(cached(next), recompute(next), 1e-5, 1e-5));
}
