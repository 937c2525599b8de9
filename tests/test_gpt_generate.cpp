// test_gpt_generate.cpp - examples/common/gpt.h's generation loop: greedy generation equals a
// hand-written argmax loop over the model's logits, across the crop to the last block_size
// tokens (learned and rotary positions); the prompt is kept; the same seed repeats sampled
// text; the model's training mode is restored; a bad prompt is an error.
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
  model.eval();
  const int64_t block = model.config().block_size();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t T = std::min<int64_t>(ids.size(), block);
    const Tensor logits = model.forward(IndexTensor(std::vector<int64_t>(ids.end() - T, ids.end()), {1, T}));
    const int64_t V = logits.size(2);
    const real* last = logits.data() + (T - 1) * V;
    ids.push_back(std::max_element(last, last + V) - last);
  }
  model.train();
  return ids;
}

}  // namespace

TEST_CASE("gpt generate: greedy equals an argmax loop, past the block's crop") {
  for (const std::string pos : {"learned", "sinusoidal", "rope"}) {
    manual_seed(1);
    gpt::GPT model(tiny(pos));
    const std::vector<int64_t> prompt = {3, 1, 4, 1, 5};
    const int64_t n = 20;  // 25 tokens: the context slides 17 times past block_size 8
    const IndexTensor out = gpt::generate(model, IndexTensor(prompt, {1, 5}), n, nn::SamplingOptions().temperature(0),
                                          gpt::recompute_step(model));
    INFO("pos ", pos);
    CHECK(out.shape() == Shape({1, 25}));
    CHECK(out.vec() == greedy_by_hand(model, prompt, n));
    CHECK(model.is_training());  // restored
  }
}

TEST_CASE("gpt generate: rows are decoded together, the prompt is kept, a seed repeats the samples") {
  manual_seed(2);
  gpt::GPT model(tiny("learned"));
  const IndexTensor prompt({1, 2, 3, 7, 7, 7}, {2, 3});
  const auto o = nn::SamplingOptions().temperature(1.2).top_k(6).top_p(0.9);
  manual_seed(9);
  const IndexTensor a = gpt::generate(model, prompt, 12, o, gpt::recompute_step(model));
  manual_seed(9);
  const IndexTensor b = gpt::generate(model, prompt, 12, o, gpt::recompute_step(model));
  CHECK(a.shape() == Shape({2, 15}));
  CHECK(a.vec() == b.vec());
  for (int64_t j = 0; j < 3; ++j) {
    CHECK(a.data()[j] == prompt.data()[j]);
    CHECK(a.data()[15 + j] == prompt.data()[3 + j]);
  }
  // greedy on two equal rows gives two equal rows
  const IndexTensor twice = gpt::generate(model, IndexTensor({4, 2, 4, 2}, {2, 2}), 10, nn::SamplingOptions().temperature(0),
                                          gpt::recompute_step(model));
  CHECK(std::vector<int64_t>(twice.vec().begin(), twice.vec().begin() + 12) ==
        std::vector<int64_t>(twice.vec().begin() + 12, twice.vec().end()));
  model.eval();
  gpt::generate(model, prompt, 1, o, gpt::recompute_step(model));
  CHECK(!model.is_training());  // an eval model stays in eval
}

TEST_CASE("gpt generate: the step sees the whole sequence; recompute crops it to block_size") {
  manual_seed(3);
  gpt::GPT model(tiny("learned"));
  std::vector<int64_t> lengths;
  const gpt::Step inner = gpt::recompute_step(model);
  const gpt::Step spy = [&](const IndexTensor& seq) {
    lengths.push_back(seq.size(1));
    return inner(seq);
  };
  gpt::generate(model, IndexTensor({1, 2}, {1, 2}), 10, nn::SamplingOptions(), spy);
  CHECK(lengths == std::vector<int64_t>({2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  CHECK(gpt::last_columns(IndexTensor({1, 2, 3, 4, 5, 6}, {2, 3}), 2).vec() == std::vector<int64_t>({2, 3, 5, 6}));
  CHECK(gpt::last_columns(IndexTensor({1, 2, 3, 4, 5, 6}, {2, 3}), 9).vec() == std::vector<int64_t>({1, 2, 3, 4, 5, 6}));
  CHECK(error_of([&] { gpt::generate(model, IndexTensor({1, 2}, {2}), 3, nn::SamplingOptions(), inner); }) ==
        "generate: the prompt must be (B, T0) with B, T0 >= 1, got shape (2)");
}
