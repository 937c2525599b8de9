// test_determinism.cpp - training is reproducible: the same seed and thread count give the
// same bits over hundreds of steps, and 1 and 2 threads agree to float rounding.
//
// The model has every source of run-to-run variation heed has: dropout (the seeded
// generator), an LSTM (fused cell, parallel gate loops), multi-head attention (flash path
// and BLAS), reductions (layer norm, cross-entropy, sums) and Adam.
#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/dropout.h>
#include <heed/layers/embedding.h>
#include <heed/layers/linear.h>
#include <heed/layers/loss.h>
#include <heed/layers/lstm.h>
#include <heed/layers/module.h>
#include <heed/layers/attention/multihead_attention.h>
#include <heed/optim/adam.h>
#include "helpers.h"

using namespace heed;

namespace {

struct TinyModel : nn::Module {
  // B batch, T time, V vocab, E width
  static constexpr int64_t V = 50, E = 64, H = 4;
  TinyModel() {
    emb = register_module("emb", nn::Embedding(V, E));
    lstm = register_module("lstm", nn::LSTM(nn::LSTMOptions(E, E)));
    attn = register_module("attn", nn::MultiheadAttention(
                                       nn::MultiheadAttentionOptions(E, H)));
    drop = register_module("drop", nn::Dropout(0.2));
    head = register_module("head", nn::Linear(E, V));
  }
  std::string repr() const override { return "TinyModel"; }
  Tensor forward(const IndexTensor& ids) {           // ids (B, T)
    Tensor x = emb->forward(ids);                     // (B, T, E)
    Tensor h = lstm->forward(x).output;               // (B, T, E)
    Tensor a = attn->forward(h, h, h, nn::AttentionMask().causal(), {}, false).output;  // (B, T, E)
    return head->forward(drop->forward(h + a));       // (B, T, V)
  }
  nn::Embedding emb{nullptr};
  nn::LSTM lstm{nullptr};
  nn::MultiheadAttention attn{nullptr};
  nn::Dropout drop{nullptr};
  nn::Linear head{nullptr};
};

// Trains a fresh model for `steps` steps from seed 7 and returns its parameters, flat.
// Dynamic threads are off, so that `threads` is the count every region uses (core/parallel.h:
// with them on, a loaded machine may change the count between runs, and with it the bits).
std::vector<real> train(int steps, int threads) {
  const int prev = get_num_threads();
  const bool prev_dynamic = get_dynamic_threads();
  set_dynamic_threads(false);
  set_num_threads(threads);
  manual_seed(7);
  TinyModel model;
  optim::Adam opt(model.parameters(), optim::AdamOptions(3e-3));
  const int64_t B = 8, T = 16;
  for (int s = 0; s < steps; ++s) {
    IndexTensor ids = test::random_ids({B, T + 1}, TinyModel::V, 100 + s);
    std::vector<int64_t> in, out;  // predict the next id
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) {
        in.push_back(ids[b * (T + 1) + t]);
        out.push_back(ids[b * (T + 1) + t + 1]);
      }
    Tensor logits = model.forward(IndexTensor(in, {B, T}));
    Tensor loss = nn::functional::cross_entropy(logits.reshape({B * T, TinyModel::V}),
                                                IndexTensor(out, {B * T}));
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  std::vector<real> flat;
  for (const Tensor& p : model.parameters()) {
    const std::vector<real> v = p.to_vector();
    flat.insert(flat.end(), v.begin(), v.end());
  }
  set_num_threads(prev);
  set_dynamic_threads(prev_dynamic);
  return flat;
}

}  // namespace

TEST_CASE("same seed, same thread count: 300 training steps give the same bits") {
  const std::vector<real> a = train(300, 2), b = train(300, 2);
  REQUIRE(a.size() == b.size());
  int64_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i];
  CHECK(differ == 0);
}

TEST_CASE("1 and 2 threads agree to 1e-5 relative (L2 norm) after 50 training steps") {
  // Not bitwise: BLAS and a few parallel loops split their sums by thread. Elementwise,
  // a parameter near 0 can differ by more than 1e-5 of itself (Adam's g / sqrt(v) turns a
  // rounding difference in a tiny gradient into a full-size step), so the bound is on the
  // whole parameter vector: |p1 - p2| / |p1| (measured here: 1.1e-6 after 50 steps).
  const std::vector<real> one = train(50, 1), two = train(50, 2);
  REQUIRE(one.size() == two.size());
  double diff2 = 0, norm2 = 0;
  for (size_t i = 0; i < one.size(); ++i) {
    diff2 += (double(one[i]) - two[i]) * (double(one[i]) - two[i]);
    norm2 += double(one[i]) * one[i];
  }
  const double rel = std::sqrt(diff2 / norm2);
  MESSAGE("relative L2 difference between 1 and 2 threads: " << rel);
  CHECK(rel < 1e-5);
}

// Two std::threads drawing from the one generator at once (two models initialised, or one
// training with dropout while another is built): together they get exactly the numbers of
// the seeded stream, each once, whatever the interleaving. Unguarded, the two would tear the
// generator's state and repeat or invent numbers (this test then fails; `make sanitize`
// would also see the race).
TEST_CASE("the generator drawn from two std::threads at once gives the seeded stream, each number once") {
  const int64_t n = 200000;  // per thread
  for (bool normal : {false, true}) {
    CAPTURE(normal);
    const auto draw_one = [normal] { return normal ? rand_normal() : rand_uniform(); };
    manual_seed(31);
    std::vector<double> expected(2 * n);
    for (double& v : expected) v = draw_one();
    manual_seed(31);
    std::vector<double> got(2 * n);
    const auto worker = [&](int64_t from) {  // half one number at a time, half under one lock
      for (int64_t i = from; i < from + n / 2; ++i) got[i] = draw_one();
      Draws d;
      for (int64_t i = from + n / 2; i < from + n; ++i) got[i] = normal ? d.normal() : d.uniform();
    };
    std::thread a(worker, 0), b(worker, n);
    a.join();
    b.join();
    std::sort(expected.begin(), expected.end());
    std::sort(got.begin(), got.end());
    CHECK(got == expected);
  }
}
