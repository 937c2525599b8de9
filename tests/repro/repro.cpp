// repro.cpp - whole programs give the same bits every time they run, as oneDNN's benchdnn
// checks each problem in its bitwise mode: run it twice, compare every bit.
//
//   build/repro/repro [--once]
//       runs each workload below twice in this process (once with --once), prints one line
//       "WORKLOAD <hash>" per workload (FNV-1a over the bits of everything it computed), and
//       exits 1, naming the workload, if the second run's hash differs from the first's.
//
// check-repro (tests/repro/rules.mk, a step of `make test`) starts it again in a fresh process
// (under a busy loop that takes a core, so that dynamic threads size heed's own loops
// differently) and compares the hashes, on each GEMM engine, at each CPU level this machine
// has (HEED_CPU), in "highest" and "medium" (HEED_REPRO_PRECISION): the same machine, the same
// thread count and the same engine must give the same bits, whatever ran before in the process
// and whatever the load.
//
// The workloads, each from a fixed seed, each what a user would compare between two runs:
//   gpt_baby     one AdamW training step of nanoGPT's baby GPT (4 layers, width 128, T 64,
//                batch 12, dropout 0.1): the loss, every gradient and every parameter after
//   seq2seq      one Adam step of an LSTM encoder-decoder with additive attention
//                (Bahdanau et al. 2015), teacher forcing
//   checkpoint   a pre-norm Transformer block run under checkpoint() (its forward recomputed
//                in backward): the output and every gradient
//   decoding     12 tokens of cached (KV cache) and of recomputed decoding, sampled with
//                top-k from the generator: every step's logits and the tokens
#include <heed/heed.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../examples/common/gpt.h"

using namespace heed;
namespace F = heed::nn::functional;

namespace {

// FNV-1a, 64 bits, over the bytes of every value fed to it.
struct Hash {
  uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  }
  void tensor(const Tensor& t) {
    if (!t.defined()) return bytes("undef", 5);
    const Tensor c = t.contiguous();
    bytes(c.data(), std::size_t(c.numel()) * sizeof(real));
  }
  void ids(const IndexTensor& t) { bytes(t.data(), std::size_t(t.numel()) * sizeof(int64_t)); }
  void module(nn::Module& m) {
    for (const Tensor& p : m.parameters()) {
      tensor(p);
      tensor(p.grad());
    }
  }
};

IndexTensor random_ids(int64_t V, const Shape& shape) {
  std::vector<int64_t> ids(shape.numel());
  for (auto& i : ids) i = int64_t(rand_uniform() * V) % V;
  return IndexTensor(ids, shape);
}

uint64_t gpt_baby() {
  manual_seed(11);
  gpt::GPT model{gpt::GPTConfig()};  // baby GPT: V 65, T 64, 4 layers, 4 heads, width 128
  optim::AdamW opt(model->parameters(), optim::AdamWOptions(3e-4));
  const int64_t B = 12, T = 64, V = 65;
  const IndexTensor x = random_ids(V, {B, T}), y = random_ids(V, {B * T});
  const Tensor loss = F::cross_entropy(model->forward(x).reshape({B * T, V}), y);
  opt.zero_grad();
  loss.backward();
  Hash h;
  h.tensor(loss);
  h.module(*model);  // gradients, parameters before the step
  opt.step();
  h.module(*model);  // parameters after it
  return h.h;
}

// A BiLSTM encoder, additive attention, an LSTMCell decoder fed [y_{t-1}; context].
struct Seq2Seq : nn::Module {
  static constexpr int64_t V = 200, Em = 32, He = 32, Hd = 64, A = 32;
  Seq2Seq() {
    src_emb = register_module("src_emb", nn::Embedding(V, Em));
    tgt_emb = register_module("tgt_emb", nn::Embedding(V, Em));
    enc = register_module("enc", nn::LSTM(nn::LSTMOptions(Em, He).bidirectional(true)));
    attn = register_module("attn", nn::AdditiveAttention(nn::AdditiveAttentionOptions(Hd, 2 * He, A)));
    dec = register_module("dec", nn::LSTMCell(nn::LSTMCellOptions(Em + 2 * He, Hd)));
    out = register_module("out", nn::Linear(Hd, V));
  }
  std::string repr() const override { return "Seq2Seq"; }
  // src (B, S), tgt_in (B, Tt) -> logits (B * Tt, V)
  Tensor forward(const IndexTensor& src, const IndexTensor& tgt_in, int64_t B, int64_t Tt) {
    const Tensor h = enc->forward(src_emb->forward(src)).output;  // (B, S, 2He)
    const Tensor hp = attn->precompute_keys(h);                    // (B, S, A)
    const Tensor y = tgt_emb->forward(tgt_in);                     // (B, Tt, Em)
    Tensor s = zeros({B, Hd}), cell = zeros({B, Hd});
    std::vector<Tensor> states;
    for (int64_t t = 0; t < Tt; ++t) {
      const Tensor c = attn->forward_projected(s, hp, h).context;  // (B, 2He)
      std::tie(s, cell) = dec->forward(cat({narrow(y, 1, t, 1).reshape({B, Em}), c}, -1),
                                       std::make_tuple(s, cell));
      states.push_back(s);
    }
    return out->forward(stack(states, 1).reshape({B * Tt, Hd}));
  }
  nn::Embedding src_emb{nullptr}, tgt_emb{nullptr};
  nn::LSTM enc{nullptr};
  nn::AdditiveAttention attn{nullptr};
  nn::LSTMCell dec{nullptr};
  nn::Linear out{nullptr};
};

uint64_t seq2seq() {
  manual_seed(12);
  Seq2Seq model;
  optim::Adam opt(model.parameters(), optim::AdamOptions(1e-3));
  const int64_t B = 16, S = 14, Tt = 7;
  const IndexTensor src = random_ids(Seq2Seq::V, {B, S}), tin = random_ids(Seq2Seq::V, {B, Tt});
  const IndexTensor tout = random_ids(Seq2Seq::V, {B * Tt});
  const Tensor loss = F::cross_entropy(model.forward(src, tin, B, Tt), tout);
  opt.zero_grad();
  loss.backward();
  Hash h;
  h.tensor(loss);
  h.module(model);
  opt.step();
  h.module(model);
  return h.h;
}

uint64_t checkpointed() {
  manual_seed(13);
  const int64_t B = 4, T = 48, E = 96, H = 4;
  nn::TransformerEncoderLayer block(nn::TransformerEncoderLayerOptions(E, H).dim_feedforward(4 * E)
                                        .dropout(0).activation("gelu").norm_first(true));
  const Tensor x = randn({B, T, E}).requires_grad_();  // (B, T, E)
  const Tensor y = checkpoint([&](const std::vector<Tensor>& in) {
    return block->forward(in[0], nn::AttentionMask().causal());
  }, {x});
  sum(y * y).backward();
  Hash h;
  h.tensor(y);
  h.tensor(x.grad());
  h.module(*block);
  return h.h;
}

uint64_t decoding() {
  manual_seed(14);
  gpt::GPT model(gpt::GPTConfig().n_layer(2).dropout(0));
  model->eval();
  NoGradGuard no_grad;
  const int64_t B = 3, T0 = 9, V = 65;
  Hash h;
  for (bool cached : {true, false}) {
    const gpt::Step step = cached ? gpt::cached_step(*model, B) : gpt::recompute_step(*model);
    std::vector<std::vector<int64_t>> rows(B);
    const IndexTensor prompt = random_ids(V, {B, T0});
    for (int64_t b = 0; b < B; ++b) rows[b].assign(prompt.data() + b * T0, prompt.data() + (b + 1) * T0);
    for (int i = 0; i < 12; ++i) {
      std::vector<int64_t> flat;
      for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
      const Tensor logits = step(IndexTensor(flat, {B, int64_t(rows[0].size())}));  // (B, V)
      h.tensor(logits);
      const IndexTensor next = nn::sample(logits, nn::SamplingOptions().top_k(10));  // (B)
      h.ids(next);
      for (int64_t b = 0; b < B; ++b) rows[b].push_back(next[b]);
    }
  }
  return h.h;
}

struct Workload {
  const char* name;
  uint64_t (*run)();
};
constexpr Workload kWorkloads[] = {
    {"gpt_baby", gpt_baby}, {"seq2seq", seq2seq}, {"checkpoint", checkpointed}, {"decoding", decoding}};

}  // namespace

int main(int argc, char** argv) {
  const bool once = argc > 1 && std::strcmp(argv[1], "--once") == 0;
  if (argc > 1 && !once) {
    std::fprintf(stderr, "usage: repro [--once]\n");
    return 2;
  }
  try {
    if (const char* p = std::getenv("HEED_REPRO_PRECISION")) set_float32_matmul_precision(p);
    int failed = 0;
    for (const Workload& w : kWorkloads) {
      const uint64_t first = w.run();
      std::printf("%s %016llx\n", w.name, (unsigned long long)first);
      if (!once) {
        const uint64_t second = w.run();
        if (second != first) {
          std::fprintf(stderr, "repro: %s gave other bits on its second run in one process (%016llx, then %016llx)\n",
                       w.name, (unsigned long long)first, (unsigned long long)second);
          ++failed;
        }
      }
    }
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "repro: %s\n", e.what());
    return 1;
  }
}
