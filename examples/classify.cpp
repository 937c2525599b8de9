// classify.cpp - an attention-pooling sequence classifier on a task that needs word order.
//
// The task: a string of random lowercase letters holds exactly one 'A' and one 'B'; is the
// 'A' before the 'B'? Swapping the two gives a string of the other class with the same
// letters, so a bag-of-words model (any function of the letter counts) is at chance, 50%,
// by construction: only a model that knows where each letter is can solve it.
//
// The model (self-attention: Vaswani et al. 2017; attention pooling: Lin et al. 2017,
// "A Structured Self-attentive Sentence Embedding"):
//   x_t   = E[w_t] + PE(t)                                   sinusoidal positions  (B, T, C)
//   h_t   = LayerNorm(x_t + MultiHead(x, x, x)_t)            padding masked         (B, T, C)
//   a_t   = softmax_t(u . h_t)   over the real letters       attention pooling     (B, T)
//   z     = sum_t a_t h_t                                                          (B, C)
//   p(y)  = softmax(W_2 relu(W_1 z + b_1) + b_2)             two classes           (B, 2)
// Shapes: B batch, T letters (8 to 32, padded to the batch's longest), C width, H heads.
//
// Output: test accuracy, and build/classify/attention.png: for a few test strings the
// self-attention (heads averaged, one row per letter) and the pooling weights (last row).
//
//   build/examples/classify                 train with the defaults and draw the attention
//   build/examples/classify --steps 300 --heads 1 --min-len 20 --max-len 64
#include <heed/heed.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/args.h"
#include "common/plots.h"
#include "common/program.h"
#include "common/progress.h"

using namespace heed;
namespace F = heed::nn::functional;

// ------------------------------------------------------------------ options
struct Options {
  int64_t min_len = 8, max_len = 32, train_size = 20000, test_size = 2000;
  int64_t width = 32, heads = 2;
  int64_t batch = 64, steps = 1200, warmup = 50;
  double lr = 3e-3, clip = 1.0;
  int64_t show = 2;  // test strings drawn in attention.png
  uint64_t seed = 1;
  int threads = 1;
  std::string out = "build/classify";
  bool smoke = false;
};

const char* kUsage =
    "usage: classify [options]\n"
    "  is the 'A' before the 'B' in a string of random letters? attention pooling learns it\n"
    "  --min-len N --max-len N   string lengths                        (8 32)\n"
    "  --train N --test N        data set sizes                        (20000 2000)\n"
    "  --width N --heads N       model size                            (32 2)\n"
    "  --batch N                 strings per step                      (64)\n"
    "  --steps N                 training steps                        (1200)\n"
    "  --lr X                    peak Adam learning rate               (0.003)\n"
    "  --warmup N                linear warmup steps, then cosine decay (50)\n"
    "  --clip X                  gradient norm clipping                (1)\n"
    "  --show N                  test strings drawn in attention.png   (2)\n"
    "  --seed N                  data and initialisation seed          (1)\n"
    "  --threads N               threads (0: every core)               (1)\n"
    "  --out DIR                 where attention.png and loss.png go   (build/classify)\n"
    "  --smoke                   a few seconds at tiny sizes; exits 1 unless the loss\n"
    "                            falls and the PNGs are valid (part of make test)\n"
    "  --help\n";

Options parse_options(int argc, char** argv, bool& help) {
  args::Parser p(argc, argv, {"help", "smoke"});
  Options o;
  help = p.flag("help");
  o.smoke = p.flag("smoke");
  if (o.smoke) o.train_size = 2000, o.test_size = 200, o.width = 16, o.steps = 150, o.warmup = 10, o.out = "build/smoke";
  o.min_len = p.get_int("min-len", o.min_len, 2, 512);
  o.max_len = p.get_int("max-len", o.max_len, 2, 512);
  if (o.max_len < o.min_len)
    throw args::UsageError("--max-len " + std::to_string(o.max_len) + " is below --min-len " + std::to_string(o.min_len));
  o.train_size = p.get_int("train", o.train_size, 1, 10000000);
  o.test_size = p.get_int("test", o.test_size, 1, 1000000);
  o.width = p.get_int("width", o.width, 2, 4096);
  o.heads = p.get_int("heads", o.heads, 1, 64);
  if (o.width % o.heads != 0)
    throw args::UsageError("--width " + std::to_string(o.width) + " is not a multiple of --heads " + std::to_string(o.heads));
  o.batch = p.get_int("batch", o.batch, 1, 4096);
  o.steps = p.get_int("steps", o.steps, 1, 10000000);
  o.lr = p.get_double("lr", o.lr, 1e-7, 1);
  o.warmup = p.get_int("warmup", o.warmup, 0, 10000000);
  o.clip = p.get_double("clip", o.clip, 1e-6, 1e6);
  o.show = p.get_int("show", o.show, 1, 20);
  o.seed = p.get_int("seed", o.seed, 0, INT64_MAX);
  o.threads = p.get_int("threads", o.threads, 0, 1024);
  o.out = p.get("out", o.out);
  p.finish();
  return o;
}

// ------------------------------------------------------------------ data
// Ids: 0 padding, 1..26 'a'..'z', 27 'A', 28 'B'.
constexpr int64_t kPad = 0, kA = 27, kB = 28, kVocab = 29;

struct Example {
  std::string text;
  int64_t label;  // 1: 'A' comes before 'B'
};

int64_t letter_id(char c) { return c == 'A' ? kA : c == 'B' ? kB : 1 + (c - 'a'); }

// Random lowercase strings with one 'A' and one 'B' at two random places; balanced classes.
std::vector<Example> make_data(int64_t n, const Options& o, std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> len(o.min_len, o.max_len);
  std::uniform_int_distribution<int> letter(0, 25);
  std::vector<Example> data;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t T = len(rng);
    std::string s(T, 'a');
    for (char& c : s) c = char('a' + letter(rng));
    std::uniform_int_distribution<int64_t> at(0, T - 1);
    int64_t i_a = at(rng), i_b = at(rng);
    while (i_b == i_a) i_b = at(rng);
    if ((i_a < i_b) != (i % 2 == 0)) std::swap(i_a, i_b);  // even i: A first
    s[i_a] = 'A', s[i_b] = 'B';
    data.push_back({s, i_a < i_b});
  }
  return data;
}

struct Batch {
  IndexTensor ids;  // (B, T) padded with kPad
  Tensor real;      // (B, T) 1 at letters, 0 at padding
  IndexTensor labels;  // (B)
};

// The strings as a heed::data dataset: example i is its letter ids and its label (one id), so
// transforms::Pad collates a batch, padding the ids with kPad to the batch's longest string.
using Ids = data::Example<IndexTensor, IndexTensor>;
struct Strings : data::datasets::Dataset<Strings, Ids> {
  explicit Strings(const std::vector<Example>& examples) : examples(&examples) {}
  ExampleType get(size_t i) override {
    std::vector<int64_t> ids;
    for (char c : (*examples)[i].text) ids.push_back(letter_id(c));
    return {IndexTensor(ids), IndexTensor({(*examples)[i].label})};
  }
  std::optional<size_t> size() const override { return examples->size(); }
  const std::vector<Example>* examples;
};

Batch to_batch(const Ids& padded) {  // padded.data (B, T), padded.target (B, 1)
  return {padded.data, padded.data.ne(kPad).to_tensor(), padded.target.squeeze(1)};
}

Batch make_batch(const std::vector<Example>& data, size_t from, size_t n) {
  std::vector<size_t> rows(n);
  for (size_t k = 0; k < n; ++k) rows[k] = from + k;
  return to_batch(Strings(data).map(data::transforms::Pad<Ids>(kPad)).get_batch(rows));
}

// ------------------------------------------------------------------ model
struct Output {
  Tensor logits;     // (B, 2)
  Tensor self_attn;  // (B, T, T) heads averaged
  Tensor pool;       // (B, T) pooling weights a_t
};

class Classifier : public nn::Module {
 public:
  explicit Classifier(const Options& o) {
    emb = register_module("emb", nn::Embedding(nn::EmbeddingOptions(kVocab, o.width).padding_idx(kPad)));
    pos = register_module("pos", nn::SinusoidalPositionalEncoding(o.width, o.max_len));
    attn = register_module("attn", nn::MultiheadAttention(nn::MultiheadAttentionOptions(o.width, o.heads)));
    norm = register_module("norm", nn::LayerNorm(nn::LayerNormOptions({o.width})));
    score = register_module("score", nn::Linear(o.width, 1));  // u
    hidden = register_module("hidden", nn::Linear(o.width, o.width));
    out = register_module("out", nn::Linear(o.width, 2));
  }
  Output forward(const Batch& b) {
    const int64_t B = b.ids.size(0), T = b.ids.size(1);
    Tensor x = pos->forward(emb->forward(b.ids));  // (B, T, C)
    auto [y, w] = attn->forward(x, x, x, nn::AttentionMask().key_padding(b.real));
    Tensor h = norm->forward(x + y);  // (B, T, C)
    Tensor e = masked_fill(score->forward(h).reshape({B, T}), eq(b.real, 0), -INFINITY);  // (B, T)
    Tensor a = softmax(e, 1);                                                              // (B, T)
    Tensor z = sum(h * a.unsqueeze(2), 1);                                                 // (B, C)
    return {out->forward(relu(hidden->forward(z))), w, a};
  }
  std::string repr() const override { return "Classifier"; }
  nn::Embedding emb{nullptr};
  nn::SinusoidalPositionalEncoding pos{nullptr};
  nn::MultiheadAttention attn{nullptr};
  nn::LayerNorm norm{nullptr};
  nn::Linear score{nullptr}, hidden{nullptr}, out{nullptr};
};

// ------------------------------------------------------------------ training and evaluation
double accuracy(Classifier& model, const std::vector<Example>& data) {
  NoGradGuard no_grad;
  model.eval();
  int64_t right = 0;
  for (size_t i = 0; i < data.size(); i += 500) {
    const size_t n = std::min<size_t>(500, data.size() - i);
    Batch b = make_batch(data, i, n);
    right += argmax(model.forward(b).logits, 1).eq(b.labels).sum().item<int64_t>();
  }
  model.train();
  return double(right) / data.size();
}

std::vector<double> train(Classifier& model, const Options& o, const std::vector<Example>& data) {
  optim::Adam opt(model.parameters(), optim::AdamOptions(o.lr));
  optim::LinearWarmupCosine schedule(opt, optim::WarmupDecayOptions(o.warmup, std::max(o.steps, o.warmup + 1)).min_lr(o.lr / 20));
  const int64_t steps_per_epoch = std::max<int64_t>(1, int64_t(data.size()) / o.batch);
  progress::Bar bar(o.steps, 0, "pass");
  std::vector<double> losses;
  const int64_t passes = (o.steps + steps_per_epoch - 1) / steps_per_epoch;
  // The training strings in order, o.batch a step (all of them when fewer), a short last batch dropped.
  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
      Strings(data).map(data::transforms::Pad<Ids>(kPad)),
      data::DataLoaderOptions(std::min<size_t>(o.batch, data.size())).drop_last(true));
  for (int64_t step = 0, pass = 1; step < o.steps; ++pass) {
    bar.start_epoch(pass, passes, std::min(steps_per_epoch, o.steps - step));
    int64_t in_pass = 0;
    for (auto& padded : *loader) {
      if (step == o.steps) break;
      Batch b = to_batch(padded);
      schedule.apply(opt, opt.step_count());
      Tensor loss = F::cross_entropy(model.forward(b).logits, b.labels);
      opt.zero_grad();
      loss.backward();
      optim::clip_grad_norm_(model.parameters(), o.clip);
      opt.step();
      losses.push_back(loss.item());
      bar.update(++in_pass, losses.back(), b.ids.numel());
      ++step;
    }
  }
  return losses;
}

// ------------------------------------------------------------------ output
// One heatmap of the first n test strings stacked: per string, its self-attention rows
// (query letter t over key letters j) and then the pooling weights a_j in a row "pool".
std::pair<int, int> draw_attention(Classifier& model, const std::vector<Example>& test, int64_t n, const std::string& path,
                                   const plot::Font& font) {
  NoGradGuard no_grad;
  model.eval();
  std::vector<std::vector<float>> rows;
  std::vector<std::string> row_labels, col_labels;
  std::string title;
  size_t S = 0;
  for (int64_t i = 0; i < n; ++i) S = std::max(S, test[i].text.size());
  for (size_t j = 0; j < S; ++j) col_labels.push_back(std::to_string(j % 10));
  for (int64_t i = 0; i < n && i < int64_t(test.size()); ++i) {
    Batch b = make_batch(test, i, 1);
    Output y = model.forward(b);
    const int64_t T = test[i].text.size();
    for (int64_t t = 0; t < T; ++t) {
      rows.emplace_back(y.self_attn.data() + t * T, y.self_attn.data() + (t + 1) * T);
      row_labels.push_back(std::string(1, test[i].text[t]));
    }
    rows.emplace_back(y.pool.data(), y.pool.data() + T);
    row_labels.push_back(std::string("pool ") + (y.logits.data()[1] > y.logits.data()[0] ? "A<B" : "B<A"));
    rows.emplace_back();  // a blank row between strings
    row_labels.push_back("");
  }
  model.train();
  return plot::attention_heatmap(path, rows, col_labels, row_labels,
                                 "self-attention (rows: letters) and pooling weights, " + std::to_string(n) + " test strings",
                                 font, "key position j (last digit)", "query letter t");
}

int run(const Options& o, std::chrono::steady_clock::time_point t0) {
  plot::Font font;
  std::mt19937_64 rng(o.seed);
  std::vector<Example> train_set = make_data(o.train_size, o, rng), test_set = make_data(o.test_size, o, rng);
  manual_seed(o.seed);
  Classifier model(o);
  std::printf("data: %zu train / %zu test strings of %lld to %lld letters, e.g. \"%s\" -> %s\n", train_set.size(),
              test_set.size(), (long long)o.min_len, (long long)o.max_len, train_set[0].text.c_str(),
              train_set[0].label ? "A before B" : "B before A");
  std::printf("model: width %lld, %lld heads, %lld parameters, %d threads\n", (long long)o.width, (long long)o.heads,
              (long long)model.num_parameters(), get_num_threads());
  std::vector<double> losses = train(model, o, train_set);
  const double acc = accuracy(model, test_set), train_acc = accuracy(model, {train_set.begin(), train_set.begin() + std::min<size_t>(2000, train_set.size())});
  auto heat = draw_attention(model, test_set, std::min<int64_t>(o.show, test_set.size()), o.out + "/attention.png", font);
  auto curve = plot::loss_curve(o.out + "/loss.png", losses, "A before B? attention-pooling classifier", font);
  std::printf("wrote %s/attention.png (%dx%d) and %s/loss.png (%dx%d)\n", o.out.c_str(), heat.first, heat.second,
              o.out.c_str(), curve.first, curve.second);
  std::printf("test accuracy %.1f%% (train %.1f%%; a bag of words: 50%%) | %.1f s wall, %d threads\n",
              100 * acc, 100 * train_acc, progress::seconds_since(t0), get_num_threads());
  if (o.smoke) {
    double first, last;
    const bool falls = program::loss_falls(losses, 0.9, first, last);
    const bool pngs = plot::png_size(o.out + "/attention.png") == heat && plot::png_size(o.out + "/loss.png") == curve &&
                      heat.first > 100 && heat.second > 100;
    std::printf("smoke: loss %.3f -> %.3f (%s), PNGs %s\n", first, last, falls ? "falls" : "DOES NOT FALL", pngs ? "valid" : "INVALID");
    return falls && pngs ? 0 : 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  const auto t0 = std::chrono::steady_clock::now();
  return program::run("classify", kUsage, argc, argv, parse_options, [&](const Options& o) { return run(o, t0); });
}
