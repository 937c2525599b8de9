// lstm_vs_attention.cpp - does an encoder-decoder need attention to copy long sequences?
//
// The task: copy a string of L random digits. Two models with the same sizes, steps,
// batches, optimizer and seed:
//   lstm       the encoder's last state (h_S, c_S) is all the decoder gets (Sutskever et al.
//              2014): L digits must pass through one fixed-size vector
//   attention  the same, plus at every output step a dot-product attention over all the
//              encoder states and input feeding (Luong et al. 2015; Bahdanau et al. 2015)
//
//   h_j        = LSTM(E x)_j                         encoder states            (B, S, H)
//   s_t        = LSTMCell([E y_{t-1} ; h~_{t-1}], s_{t-1}),  s_0 = h_S           (B, H)
//   lstm:      p(y_t) = softmax(W_o s_t)
//   attention: alpha_tj = softmax_j(s_t . h_j),  c_t = sum_j alpha_tj h_j
//              h~_t = tanh(W_c [c_t ; s_t]),   p(y_t) = softmax(W_o h~_t)
// Letters: B batch, S = T = L the length, E embedding width, H state width, V = 12 ids.
//
// Both are trained on lengths drawn from --lengths (teacher forcing), then decoded greedily
// on fresh strings of each length. Output: a table of per-digit accuracy (and whole-string
// exact match) by length, and build/lstm_vs_attention/accuracy.png.
//
//   build/examples/lstm_vs_attention
//   build/examples/lstm_vs_attention --lengths 10,50,100,200 --steps 1500 --hidden 128
#include <heed/heed.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>
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
  std::vector<int64_t> lengths = {10, 25, 50, 100, 200};
  int64_t embed = 16, hidden = 64, batch = 32, steps = 800, warmup = 30, test_size = 100;
  double lr = 1e-2, clip = 1.0;
  uint64_t seed = 1;
  int threads = 1;
  std::string out = "build/lstm_vs_attention";
  bool smoke = false;
};

const char* kUsage =
    "usage: lstm_vs_attention [options]\n"
    "  copy strings of random digits with an LSTM encoder-decoder, without and with attention\n"
    "  --lengths L,L,...     lengths to train on and to test                (10,25,50,100,200)\n"
    "  --embed N --hidden N  model sizes, the same for both models          (16 64)\n"
    "  --batch N             strings per step                               (32)\n"
    "  --steps N             training steps of each model (its budget)      (800)\n"
    "  --lr X                peak Adam learning rate                        (0.01)\n"
    "  --warmup N            linear warmup steps, then cosine decay         (30)\n"
    "  --clip X              gradient norm clipping                         (1)\n"
    "  --test N              test strings per length                        (100)\n"
    "  --seed N              data and initialisation seed                   (1)\n"
    "  --threads N           threads (0: every core)                        (1)\n"
    "  --out DIR             where accuracy.png goes                        (build/lstm_vs_attention)\n"
    "  --smoke               a few seconds at tiny sizes; exits 1 unless both losses\n"
    "                        fall and the PNG is valid (part of make test)\n"
    "  --help\n";

std::vector<int64_t> parse_lengths(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    int64_t v = 0;
    try { v = std::stoll(item, &used); } catch (const std::exception&) { used = 0; }
    if (used == 0 || used != item.size() || v < 1 || v > 1000)
      throw args::UsageError("--lengths needs comma-separated lengths in [1, 1000], got '" + text + "'");
    out.push_back(v);
  }
  if (out.empty()) throw args::UsageError("--lengths needs at least one length");
  return out;
}

Options parse_options(int argc, char** argv, bool& help) {
  args::Parser p(argc, argv, {"help", "smoke"});
  Options o;
  help = p.flag("help");
  o.smoke = p.flag("smoke");
  if (o.smoke) o.lengths = {4, 8}, o.hidden = 16, o.embed = 8, o.steps = 60, o.warmup = 5, o.test_size = 20, o.out = "build/smoke";
  if (p.given("lengths")) o.lengths = parse_lengths(p.get("lengths", ""));
  o.embed = p.get_int("embed", o.embed, 1, 4096);
  o.hidden = p.get_int("hidden", o.hidden, 1, 4096);
  o.batch = p.get_int("batch", o.batch, 1, 4096);
  o.steps = p.get_int("steps", o.steps, 1, 10000000);
  o.lr = p.get_double("lr", o.lr, 1e-7, 1);
  o.warmup = p.get_int("warmup", o.warmup, 0, 10000000);
  o.clip = p.get_double("clip", o.clip, 1e-6, 1e6);
  o.test_size = p.get_int("test", o.test_size, 1, 100000);
  o.seed = p.get_int("seed", o.seed, 0, INT64_MAX);
  o.threads = p.get_int("threads", o.threads, 0, 1024);
  o.out = p.get("out", o.out);
  p.finish();
  return o;
}

// ------------------------------------------------------------------ data
constexpr int64_t kStart = 1, kVocab = 12;  // ids: 0 unused, 1 <s>, 2..11 the digits 0..9

// B strings of L random digits, as ids (B, L); the target is the source itself.
IndexTensor random_digits(int64_t B, int64_t L, std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> digit(2, kVocab - 1);
  std::vector<int64_t> ids(B * L);
  for (auto& v : ids) v = digit(rng);
  return IndexTensor(ids, {B, L});
}

// The training strings as a heed::data dataset: example i is string i, as source and target.
using Pair = data::Example<IndexTensor, IndexTensor>;
struct Strings : data::datasets::Dataset<Strings, Pair> {
  ExampleType get(size_t i) override { return {strings[i], strings[i]}; }
  std::optional<size_t> size() const override { return strings.size(); }
  std::vector<IndexTensor> strings;  // each (L)
};

// Every step's strings, drawn up front in step order: a length from --lengths, then o.batch
// strings of it. The same seed for both models, so both see the same strings.
Strings training_strings(const Options& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_int_distribution<size_t> pick(0, o.lengths.size() - 1);
  Strings ds;
  for (int64_t step = 0; step < o.steps; ++step) {
    const int64_t L = o.lengths[pick(rng)];
    IndexTensor batch = random_digits(o.batch, L, rng);  // (B, L)
    for (int64_t b = 0; b < o.batch; ++b) ds.strings.push_back(batch.select(0, b));
  }
  return ds;
}

// ------------------------------------------------------------------ model
class CopyModel : public nn::Module {
 public:
  CopyModel(const Options& o, bool attention) : attention_(attention), H_(o.hidden) {
    emb = register_module("emb", nn::Embedding(kVocab, o.embed));
    encoder = register_module("encoder", nn::LSTM(nn::LSTMOptions(o.embed, o.hidden)));
    decoder = register_module("decoder", nn::LSTMCell(o.embed + (attention ? o.hidden : 0), o.hidden));
    if (attention) combine = register_module("combine", nn::Linear(2 * o.hidden, o.hidden));
    out = register_module("out", nn::Linear(o.hidden, kVocab));
  }

  // src (B, S) -> logits (B, T, V). With `tgt` (B, T) the decoder reads the true previous
  // digit (teacher forcing); without, its own argmax (greedy decoding) for T = S steps.
  Tensor forward(const IndexTensor& src, const IndexTensor* tgt) {
    const int64_t B = src.size(0), S = src.size(1);
    auto [h, h_n, c_n] = encoder->forward(emb->forward(src));  // (B, S, H), (1, B, H) x2
    Tensor s = h_n.reshape({B, H_}), c = c_n.reshape({B, H_}), feed = zeros({B, H_});
    std::vector<int64_t> prev(B, kStart);
    std::vector<Tensor> logits;
    for (int64_t t = 0; t < S; ++t) {
      Tensor x = emb->forward(IndexTensor(prev));  // (B, E)
      if (attention_) x = cat({x, feed}, -1);       // (B, E + H)
      std::tie(s, c) = decoder->forward(x, std::make_tuple(s, c));
      Tensor o_t = s;
      if (attention_) {
        Tensor alpha = softmax(matmul(h, s.unsqueeze(2)).squeeze(2), 1);  // (B, S)
        Tensor ctx = matmul(alpha.unsqueeze(1), h).squeeze(1);            // (B, H)
        o_t = feed = tanh(combine->forward(cat({ctx, s}, -1)));           // (B, H)
      }
      logits.push_back(out->forward(o_t));  // (B, V)
      IndexTensor guess = tgt ? IndexTensor() : argmax(logits.back().detach(), 1);
      for (int64_t b = 0; b < B; ++b) prev[b] = tgt ? (*tgt)[b * S + t] : guess[b];
    }
    return stack(logits, 1);
  }
  std::string repr() const override { return attention_ ? "CopyModel(attention)" : "CopyModel(lstm)"; }

  nn::Embedding emb{nullptr};
  nn::LSTM encoder{nullptr};
  nn::LSTMCell decoder{nullptr};
  nn::Linear combine{nullptr}, out{nullptr};

 private:
  bool attention_;
  int64_t H_;
};

// ------------------------------------------------------------------ training and test
std::vector<double> train(CopyModel& model, const Options& o, const std::string& name) {
  optim::Adam opt(model.parameters(), optim::AdamOptions(o.lr));
  optim::LinearWarmupCosine schedule(opt, optim::WarmupDecayOptions(o.warmup, std::max(o.steps, o.warmup + 1)).min_lr(o.lr / 20));
  progress::Bar bar(o.steps, 0, name);
  bar.start_epoch(1, 1, o.steps);
  std::vector<double> losses;
  // The strings in order, o.batch a step: batch `step` is that step's strings, all of one length.
  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
      training_strings(o).map(data::transforms::Stack<Pair>()), data::DataLoaderOptions(o.batch));
  int64_t step = 0;
  for (auto& batch : *loader) {
    const IndexTensor& src = batch.data;  // (B, L)
    const int64_t L = src.size(1);
    schedule.apply(opt, opt.step_count());
    Tensor logits = model.forward(src, &src);  // (B, L, V)
    Tensor loss = F::cross_entropy(logits.reshape({-1, kVocab}), batch.target.reshape({o.batch * L}));
    opt.zero_grad();
    loss.backward();
    optim::clip_grad_norm_(model.parameters(), o.clip);
    opt.step();
    losses.push_back(loss.item());
    bar.update(++step, losses.back(), 2 * o.batch * L);
  }
  return losses;
}

struct Score {
  double digits = 0, strings = 0;  // fraction of digits right, of whole strings right
};

Score test(CopyModel& model, int64_t L, const Options& o) {
  NoGradGuard no_grad;
  model.eval();
  std::mt19937_64 rng(o.seed * 1000 + L + 7);  // unseen strings, the same for both models
  IndexTensor src = random_digits(o.test_size, L, rng);
  IndexTensor guess = argmax(model.forward(src, nullptr), 2);  // (N, L)
  Score s;
  for (int64_t i = 0; i < o.test_size; ++i) {
    int64_t right = 0;
    for (int64_t t = 0; t < L; ++t) right += guess[i * L + t] == src[i * L + t];
    s.digits += double(right) / (L * o.test_size);
    s.strings += right == L ? 1.0 / o.test_size : 0;
  }
  model.train();
  return s;
}

// ------------------------------------------------------------------ main
int run(const Options& o, std::chrono::steady_clock::time_point t0) {
  plot::Font font;
  std::printf("task: copy L random digits, L in {");
  for (size_t i = 0; i < o.lengths.size(); ++i) std::printf("%s%lld", i ? ", " : "", (long long)o.lengths[i]);
  std::printf("}; each model: %lld steps of %lld strings, embed %lld, hidden %lld, %d threads\n", (long long)o.steps,
              (long long)o.batch, (long long)o.embed, (long long)o.hidden, get_num_threads());
  std::vector<std::vector<Score>> scores(2);
  std::vector<std::vector<double>> losses(2);
  std::vector<double> seconds(2);
  const char* names[2] = {"lstm", "attention"};
  for (int m = 0; m < 2; ++m) {
    manual_seed(o.seed);
    CopyModel model(o, m == 1);
    std::printf("%s: %lld parameters\n", names[m], (long long)model.num_parameters());
    const auto tm = std::chrono::steady_clock::now();
    losses[m] = train(model, o, names[m]);
    seconds[m] = progress::seconds_since(tm);
    for (int64_t L : o.lengths) scores[m].push_back(test(model, L, o));
  }

  std::printf("\n| length | LSTM digits | LSTM strings | attention digits | attention strings |\n|---|---|---|---|---|\n");
  std::vector<double> x;
  std::vector<plot::Series> series = {{"LSTM encoder-decoder", {200, 80, 40}, {}}, {"with attention", {20, 60, 160}, {}}};
  for (size_t i = 0; i < o.lengths.size(); ++i) {
    std::printf("| %lld | %.1f%% | %.1f%% | %.1f%% | %.1f%% |\n", (long long)o.lengths[i], 100 * scores[0][i].digits,
                100 * scores[0][i].strings, 100 * scores[1][i].digits, 100 * scores[1][i].strings);
    x.push_back(o.lengths[i]);
    for (int m = 0; m < 2; ++m) series[m].y.push_back(100 * scores[m][i].digits);
  }
  auto png = plot::line_chart(o.out + "/accuracy.png", x, series, 0, 100,
                              "copying digits: per-digit accuracy, greedy decoding (" + std::to_string(o.steps) + " steps each)",
                              "string length L", "digits right (%)", font);
  std::printf("\nwrote %s/accuracy.png (%dx%d) | training %.1f s (lstm) + %.1f s (attention), total %.1f s wall, "
              "%d threads\n",
              o.out.c_str(), png.first, png.second, seconds[0], seconds[1], progress::seconds_since(t0), get_num_threads());
  if (o.smoke) {
    double first, last;
    bool falls = true;
    for (int m = 0; m < 2; ++m) falls = program::loss_falls(losses[m], 0.9, first, last) && falls;
    const bool valid = plot::png_size(o.out + "/accuracy.png") == png && png.first > 100;
    std::printf("smoke: losses %s, PNG %s\n", falls ? "fall" : "DO NOT FALL", valid ? "valid" : "INVALID");
    return falls && valid ? 0 : 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  const auto t0 = std::chrono::steady_clock::now();
  return program::run("lstm_vs_attention", kUsage, argc, argv, parse_options, [&](const Options& o) { return run(o, t0); });
}
