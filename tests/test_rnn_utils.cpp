// test_rnn_utils.cpp - nn::utils::pad_sequence: ids and tensors padded as torch's
// pad_sequence pads them, the lengths and the (B, Tmax) mask (1 = real token), gradients
// reaching every sequence, and an LSTM fed the padded batch giving each sequence's own run.
#include <vector>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/embedding.h>
#include <heed/layers/lstm.h>
#include <heed/layers/rnn_utils.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;
using heed::test::error_of;
namespace U = heed::nn::utils;

TEST_CASE("pad_sequence: ids, batch first or time first, lengths and the mask") {
  const U::PaddedIds p = U::pad_sequence({{5, 8, 2}, {7}, {}, {1, 4}});
  CHECK(p.ids.shape() == Shape{4, 3});
  CHECK(p.ids.vec() == std::vector<int64_t>{5, 8, 2, 7, 0, 0, 0, 0, 0, 1, 4, 0});
  CHECK(p.lengths == std::vector<int64_t>{3, 1, 0, 2});
  CHECK(p.mask.shape() == Shape{4, 3});
  CHECK(p.mask.to_vector() == std::vector<real>{1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0});

  const U::PaddedIds t = U::pad_sequence({{5, 8, 2}, {7}}, /*batch_first=*/false, /*padding_value=*/-1);
  CHECK(t.ids.shape() == Shape{3, 2});
  CHECK(t.ids.vec() == std::vector<int64_t>{5, 7, 8, -1, 2, -1});
  CHECK(t.mask.shape() == Shape{2, 3});  // the mask stays (B, Tmax), as the layers take it

  CHECK(error_of([] { U::pad_sequence(std::vector<std::vector<int64_t>>{}); }) ==
        "pad_sequence: got no sequences");
}

TEST_CASE("pad_sequence: tensors (T_b, *) -> (B, Tmax, *), differentiable, errors") {
  manual_seed(620);
  Tensor a = randn({3, 2}).requires_grad_(), b = randn({1, 2}).requires_grad_();
  const U::PaddedTensors p = U::pad_sequence({a, b}, true, -5);
  CHECK(p.padded.shape() == Shape{2, 3, 2});
  CHECK(allclose(narrow(p.padded, 0, 0, 1).squeeze(0), a));
  CHECK(allclose(p.padded.select(0, 1).narrow(0, 0, 1), b));
  CHECK(p.padded.at({1, 1, 0}) == -5);
  CHECK(p.padded.at({1, 2, 1}) == -5);
  CHECK(p.lengths == std::vector<int64_t>{3, 1});
  CHECK(p.mask.to_vector() == std::vector<real>{1, 1, 1, 1, 0, 0});

  // the gradient reaches each sequence from its own rows (padding rows are constants)
  sum(p.padded * (arange(12).reshape({2, 3, 2}) + 1)).backward();
  CHECK(a.grad().to_vector() == std::vector<real>{1, 2, 3, 4, 5, 6});
  CHECK(b.grad().to_vector() == std::vector<real>{7, 8});

  const U::PaddedTensors t = U::pad_sequence({a.detach(), b.detach()}, /*batch_first=*/false);
  CHECK(t.padded.shape() == Shape{3, 2, 2});
  CHECK(allclose(t.padded.transpose(0, 1), U::pad_sequence({a.detach(), b.detach()}).padded));
  CHECK(t.padded.at({2, 1, 0}) == 0);  // the default padding_value

  CHECK(error_of([&] { U::pad_sequence({a, randn({2, 3})}); }) ==
        "pad_sequence: sequence 1 (2,3) and sequence 0 (3,2) differ after the time dim");
  CHECK(error_of([&] { U::pad_sequence({a, scalar_tensor(1)}); }) ==
        "pad_sequence: sequence 1 must be (T, *); got ()");
  CHECK(error_of([] { U::pad_sequence(std::vector<Tensor>{}); }) == "pad_sequence: got no sequences");
}

TEST_CASE("pad_sequence: an LSTM fed the padded batch gives every sequence its own run") {
  manual_seed(621);
  const std::vector<std::vector<int64_t>> sentences = {{3, 1, 4, 1, 5}, {9, 2}, {6, 5, 3}};
  nn::Embedding emb(nn::EmbeddingOptions(10, 4));
  nn::LSTM lstm(nn::LSTMOptions(4, 3).num_layers(2).bidirectional(true));
  const U::PaddedIds batch = U::pad_sequence(sentences);
  const Tensor x = emb->forward(batch.ids);  // (3, 5, 4)
  const nn::LSTMOutput by_lengths = lstm->forward(x, {}, batch.lengths);
  const nn::LSTMOutput by_mask = lstm->forward(x, std::nullopt, batch.mask);
  CHECK(allclose(by_mask.output, by_lengths.output));
  CHECK(allclose(by_mask.h_n, by_lengths.h_n));
  for (size_t b = 0; b < sentences.size(); ++b) {
    CAPTURE(b);
    const int64_t T = int64_t(sentences[b].size());
    const nn::LSTMOutput one = lstm->forward(emb->forward(IndexTensor(sentences[b], {1, T})));
    CHECK(allclose(narrow(by_lengths.output.select(0, int64_t(b)), 0, 0, T), one.output.select(0, 0),
                   1e-5, 1e-6));
    CHECK(allclose(by_lengths.h_n.select(1, int64_t(b)), one.h_n.select(1, 0), 1e-5, 1e-6));
    CHECK(allclose(by_lengths.c_n.select(1, int64_t(b)), one.c_n.select(1, 0), 1e-5, 1e-6));
  }
}
