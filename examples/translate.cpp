// translate.cpp - `make demo`: learn to translate human-written dates into ISO dates with an
// attention encoder-decoder (an LSTM with attention, or a Transformer), and draw what the
// attention learned.
//
//   "Wednesday, 3 March 2021"  "mar 3 21"  "03.03.2021"  "the 3rd of March, 2021"  ->  "2021-03-03"
//
// The correct alignment is known (the year digits of the output come from the year in the
// input, and so on), so the attention heatmap can be checked by eye. Read top to bottom:
//   Options            every setting and its default
//   make_data          42 surface formats of 36,525 days, split by day (common/dates.h)
//   make_model         --model lstm: embedding -> bidirectional LSTM -> LSTMCell decoder with
//                      attention (common/seq2seq.h; Bahdanau et al. 2015, Luong et al. 2015)
//                      --model transformer: nn::Transformer (encoder-decoder stacks),
//                      sinusoidal positions, padding masks (common/transformer_seq2seq.h)
//   train              Adam, linear warmup + cosine decay, gradient clipping, teacher forcing
//   exact_match        greedy or beam-search decoding (common/decode.h) of whole dates
//   show, draw         translations with their attention as text, and PNG pictures
// Shapes: B batch, S source characters, T output characters, V target vocabulary.
//
//   build/examples/translate                       train with the defaults (what make demo runs)
//   build/examples/translate --score dot --save m.ckpt
//   build/examples/translate --translate "12 Dec 1999" --resume m.ckpt --score dot
//   build/examples/translate --model transformer     the Transformer, its own defaults
#include <heed/heed.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>
#include <vector>

#include "common/args.h"
#include "common/dates.h"
#include "common/decode.h"
#include "common/plots.h"
#include "common/program.h"
#include "common/progress.h"
#include "common/seq2seq.h"
#include "common/transformer_seq2seq.h"

using namespace heed;
namespace F = heed::nn::functional;
using seq2seq::Batch;
using seq2seq::Seq2Seq;
using seq2seq::TransformerSeq2Seq;

// ------------------------------------------------------------------ options
struct Options {
  // data
  int64_t train_size = 20000, valid_size = 1000, test_size = 1000;
  // model
  std::string model = "lstm";  // lstm (common/seq2seq.h) | transformer (common/transformer_seq2seq.h)
  int64_t embed = 32, hidden = 64, attn_dim = 64, window = 8;  // lstm
  std::string score = "additive";  // additive | dot | general | concat | local-p
  int64_t d_model = 64, heads = 4, layers = 2, ff = 256;      // transformer: encoder and decoder layers each
  double dropout = 0;
  // training
  int epochs = 4;
  int64_t batch = 64, warmup = 100;
  double lr = 3e-3, clip = 1.0, teacher_forcing = 1.0;
  // decoding
  int64_t beam = 3;
  double length_alpha = 1.0;
  double min_accuracy = 0;  // exit 1 when greedy test exact match (%) is below it (make demo: 99)
  bool no_cache = false;    // transformer: decode by recomputing every token, not with the KV cache
  // running
  uint64_t seed = 1;
  // One thread: at these sizes (64 x 128 matrices) a second thread gains little, and on a
  // machine shared with other jobs OpenMP's waiting threads made a step many times slower
  // (README; `make bench` step 4, bench_models --busy seq2seq, times this model's step).
  int threads = 1;
  std::string precision = "highest";  // heed::set_float32_matmul_precision (README, "Mixed precision")
  std::string out = "build/demo", save, resume, translate, graph;
  bool smoke = false;
};

const char* kUsage =
    "usage: translate [options]\n"
    "  learn human-written dates -> ISO dates with an attention encoder-decoder\n"
    "  --model M            lstm | transformer                            (lstm)\n"
    "  --score S            lstm: additive | dot | general | concat | local-p  (additive)\n"
    "  --epochs N           passes over the training set                  (4; transformer 6)\n"
    "  --batch N            sentences per step                            (64)\n"
    "  --lr X               peak Adam learning rate                       (0.003)\n"
    "  --warmup N           linear warmup steps, then cosine decay        (100; transformer 200)\n"
    "  --clip X             gradient norm clipping                        (1)\n"
    "  --teacher-forcing X  probability of feeding the true previous char (1)\n"
    "  --embed N --hidden N --attn-dim N --window N   lstm sizes          (32 64 64 8)\n"
    "  --d-model N --heads N --layers N --ff N        transformer sizes   (64 4 2 256)\n"
    "  --dropout X          transformer dropout                           (0)\n"
    "  --train N --valid N --test N                   data set sizes      (20000 1000 1000)\n"
    "  --beam N             beam width for the test set and --translate   (3)\n"
    "  --length-alpha X     beam score log p(y|x) / |y|^X (0: none)       (1)\n"
    "  --no-cache           transformer: decode by running the decoder over every token so far\n"
    "                       at each step, instead of through its key/value cache\n"
    "  --min-accuracy P     exit 1 if test exact match is below P percent (0)\n"
    "  --seed N             data and initialisation seed                  (1)\n"
    "  --threads N          threads (0: every core)                       (1)\n"
    "  --precision P        matmul precision: highest, high or medium (bf16 inputs) (highest)\n"
    "  --out DIR            where the PNGs (and the default checkpoint) go (build/demo)\n"
    "  --save FILE          checkpoint after every epoch   (DIR/translate.ckpt, DIR/translate_transformer.ckpt)\n"
    "  --resume FILE        continue training from a checkpoint\n"
    "  --translate TEXT     load a checkpoint (--resume, else DIR/translate.ckpt),\n"
    "                       translate TEXT and draw DIR/translation.png\n"
    "  --graph FILE.dot     lstm: after training, write the autograd graph of one decoder step\n"
    "                       (Graphviz DOT; render with  dot -Tpng FILE.dot -o FILE.png)\n"
    "  --smoke              a few seconds at tiny sizes; exits 1 unless the loss falls\n"
    "                       and the PNGs are valid (part of make test)\n"
    "  --help\n";

Options parse_options(int argc, char** argv, bool& help) {
  args::Parser p(argc, argv, {"help", "smoke", "no-cache"});
  Options o;
  help = p.flag("help");
  o.smoke = p.flag("smoke");
  o.no_cache = p.flag("no-cache");
  if (o.smoke) {  // tiny sizes; every other option may still override them
    o.train_size = 512, o.valid_size = 64, o.test_size = 64, o.epochs = 2, o.batch = 32;
    o.embed = 8, o.hidden = 16, o.attn_dim = 16, o.warmup = 5, o.lr = 1e-2, o.out = "build/smoke";
  }
  o.model = p.get("model", o.model);
  if (o.model != "lstm" && o.model != "transformer")
    throw args::UsageError("--model must be lstm or transformer, got '" + o.model + "'");
  if (o.model == "transformer") {  // its own defaults (README); every option may still override them
    o.epochs = 6, o.lr = 3e-3, o.warmup = 200;
    if (o.smoke) o.epochs = 2, o.d_model = 16, o.heads = 2, o.layers = 1, o.ff = 32, o.lr = 1e-2, o.warmup = 5;
  }
  o.score = p.get("score", o.score);
  if (!seq2seq::known_score(o.score))
    throw args::UsageError("--score must be additive, dot, general, concat or local-p, got '" + o.score + "'");
  o.epochs = p.get_int("epochs", o.epochs, 0, 1000);
  o.batch = p.get_int("batch", o.batch, 1, 4096);
  o.lr = p.get_double("lr", o.lr, 1e-6, 1);
  o.warmup = p.get_int("warmup", o.warmup, 0, 1000000);
  o.clip = p.get_double("clip", o.clip, 1e-6, 1e6);
  o.teacher_forcing = p.get_double("teacher-forcing", o.teacher_forcing, 0, 1);
  o.embed = p.get_int("embed", o.embed, 1, 4096);
  o.hidden = p.get_int("hidden", o.hidden, 1, 4096);
  o.attn_dim = p.get_int("attn-dim", o.attn_dim, 1, 4096);
  o.window = p.get_int("window", o.window, 1, dates::kMaxSourceLen);
  o.d_model = p.get_int("d-model", o.d_model, 1, 4096);
  o.heads = p.get_int("heads", o.heads, 1, 256);
  if (o.d_model % o.heads != 0)
    throw args::UsageError("--heads must divide --d-model, got " + std::to_string(o.heads) + " and " +
                           std::to_string(o.d_model));
  o.layers = p.get_int("layers", o.layers, 1, 64);
  o.ff = p.get_int("ff", o.ff, 1, 65536);
  o.dropout = p.get_double("dropout", o.dropout, 0, 0.99);
  o.train_size = p.get_int("train", o.train_size, 1, 10000000);
  o.valid_size = p.get_int("valid", o.valid_size, 1, 10000);
  o.test_size = p.get_int("test", o.test_size, 1, 10000);
  o.beam = p.get_int("beam", o.beam, 1, 64);
  o.length_alpha = p.get_double("length-alpha", o.length_alpha, 0, 10);
  o.min_accuracy = p.get_double("min-accuracy", o.min_accuracy, 0, 100);
  o.seed = p.get_int("seed", o.seed, 0, INT64_MAX);
  o.threads = p.get_int("threads", o.threads, 0, 1024);
  o.precision = p.get("precision", o.precision);
  if (o.precision != "highest" && o.precision != "high" && o.precision != "medium")
    throw args::UsageError("--precision must be highest, high or medium, got '" + o.precision + "'");
  o.out = p.get("out", o.out);
  o.save = p.get("save", o.out + (o.model == "lstm" ? "/translate.ckpt" : "/translate_transformer.ckpt"));
  o.resume = p.get("resume", "");
  o.translate = p.get("translate", "");
  o.graph = p.get("graph", "");
  if (p.given("translate") && o.translate.empty())
    throw args::UsageError("--translate needs a date, e.g. \"12 Dec 1999\"");
  if (o.model == "lstm" && o.no_cache)
    throw args::UsageError("--no-cache selects the Transformer's recompute decoding; it takes --model transformer");
  if (o.model == "transformer" && !o.graph.empty())
    throw args::UsageError("--graph draws a step of the LSTM decoder; it takes --model lstm");
  p.finish();
  return o;
}

// ------------------------------------------------------------------ data and model
dates::Splits make_data(const Options& o) {
  return dates::make_splits(o.seed, o.train_size, o.valid_size, o.test_size);
}

Seq2Seq make_lstm(const Options& o) {
  manual_seed(o.seed);
  return Seq2Seq(
      seq2seq::ModelOptions().embed(o.embed).hidden(o.hidden).score(o.score).attn_dim(o.attn_dim).window(o.window));
}

TransformerSeq2Seq make_transformer(const Options& o) {
  manual_seed(o.seed);
  auto model = TransformerSeq2Seq(seq2seq::TransformerOptions().d_model(o.d_model).nhead(o.heads)
      .encoder_layers(o.layers).decoder_layers(o.layers).dim_feedforward(o.ff).dropout(o.dropout));
  model->use_cache = !o.no_cache;
  return model;
}

// What the two models differ in, beyond decode.h's interface: their training forward pass,
// the name their outputs carry, and where their attention pictures come from.
Tensor training_logits(Seq2Seq::Impl& model, const Batch& b, const Options& o, std::mt19937_64& rng) {
  return model.forward(b, o.teacher_forcing, rng);  // (B, T, V), one decoder step at a time
}
Tensor training_logits(TransformerSeq2Seq::Impl& model, const Batch& b, const Options&, std::mt19937_64&) {
  return model.forward(b);  // (B, T, V), every position at once (causal mask)
}

std::string describe(const Seq2Seq::Impl& model, const Options& o) {
  char s[160];
  std::snprintf(s, sizeof s, "%s attention, embed %lld, encoder 2x%lld, decoder %lld", o.score.c_str(),
                (long long)o.embed, (long long)o.hidden, (long long)(2 * o.hidden));
  return s;
}
std::string describe(const TransformerSeq2Seq::Impl& model, const Options& o) {
  char s[160];
  std::snprintf(s, sizeof s, "Transformer, d_model %lld, %lld heads, %lld encoder + %lld decoder layers, ff %lld, dropout %g",
                (long long)o.d_model, (long long)o.heads, (long long)o.layers, (long long)o.layers, (long long)o.ff,
                o.dropout);
  return s;
}

// Batches of similar source length (sorted within chunks of 16 batches, then shuffled),
// so that little of each batch is padding. Different every epoch, fixed by the seed.
std::vector<std::vector<size_t>> make_batches(int64_t n, int64_t B, std::mt19937_64& rng,
                                              const std::vector<dates::Example>& data) {
  std::vector<int64_t> idx(n);
  for (int64_t i = 0; i < n; ++i) idx[i] = i;
  std::shuffle(idx.begin(), idx.end(), rng);
  for (int64_t c = 0; c < n; c += 16 * B) {
    auto end = idx.begin() + std::min(n, c + 16 * B);
    std::stable_sort(idx.begin() + c, end, [&](int64_t a, int64_t b) {
      return data[a].source.size() < data[b].source.size();
    });
  }
  std::vector<std::vector<size_t>> batches;
  for (int64_t i = 0; i < n; i += B) batches.emplace_back(idx.begin() + i, idx.begin() + std::min(n, i + B));
  std::shuffle(batches.begin(), batches.end(), rng);
  return batches;
}

// A sampler (optim/data/samplers.h) that hands out batches of indices made beforehand, one
// batch per next(); set_batches gives an epoch's, as DistributedSampler's set_epoch. Each
// batch must hold at most the loader's batch_size indices, and the loader's drop_last must be
// false (a short batch is a batch here).
class FixedBatchSampler {
 public:
  void set_batches(std::vector<std::vector<size_t>> batches) {
    batches_ = std::move(batches);
    next_ = 0;
  }
  void reset(std::optional<size_t> = std::nullopt) { next_ = 0; }
  std::optional<std::vector<size_t>> next(size_t) {
    if (next_ == batches_.size()) return std::nullopt;
    return batches_[next_++];
  }

 private:
  std::vector<std::vector<size_t>> batches_;
  size_t next_ = 0;
};

// The dates as a heed::data dataset: example i is its source ids and its target ids (ending
// in </s>), so transforms::Pad collates a batch, padding both with <pad> to the batch's
// longest. <pad> is in no date, so the ids that are not <pad> are the real characters.
using Ids = data::Example<IndexTensor, IndexTensor>;
struct Dates : data::datasets::Dataset<Dates, Ids> {
  explicit Dates(const std::vector<dates::Example>& examples) : examples(&examples) {}
  ExampleType get(size_t i) override {
    return {IndexTensor(dates::encode_source((*examples)[i].source)),
            IndexTensor(dates::encode_target((*examples)[i].target))};
  }
  std::optional<size_t> size() const override { return examples->size(); }
  const std::vector<dates::Example>* examples;
};

Batch to_batch(const Ids& padded) {  // padded.data (B, S), padded.target (B, T)
  Batch b;
  b.src = padded.data;
  b.lengths = padded.data.ne(dates::kPad).sum(1).vec();
  b.tgt = padded.target;
  b.tokens = padded.data.ne(dates::kPad).sum().item() + padded.target.ne(dates::kPad).sum().item();
  return b;
}

// ------------------------------------------------------------------ evaluation
// Fraction of `data` whose whole output (10 characters and </s>) is right: greedy decoding
// in batches, or beam search one sentence at a time when beam > 1.
template <class Model>
double exact_match(Model& model, const std::vector<dates::Example>& data, int64_t beam, double alpha) {
  model.eval();
  int64_t right = 0;
  const int64_t chunk = beam > 1 ? 1 : 250;
  for (size_t i = 0; i < data.size(); i += chunk) {
    std::vector<int64_t> rows;
    for (size_t k = i; k < std::min(data.size(), i + chunk); ++k) rows.push_back(k);
    Batch b = seq2seq::make_batch(data, rows);
    std::vector<seq2seq::Translation> ys;
    if (beam > 1) ys = {seq2seq::beam_search(model, b, beam, dates::kTargetLen + 1, alpha)};
    else ys = seq2seq::greedy(model, b, dates::kTargetLen + 1);
    for (size_t k = 0; k < rows.size(); ++k)
      right += !ys[k].tokens.empty() && ys[k].tokens.back() == dates::kEnd &&
               dates::decode_target(ys[k].tokens) == data[rows[k]].target;
  }
  model.train();
  return double(right) / data.size();
}

// ------------------------------------------------------------------ training
// One run of `o.epochs` epochs (continuing from a checkpoint's step with --resume).
// Returns the loss of every step; validation exact match is printed after each epoch.
template <class Model>
std::vector<double> train(Model& model, optim::Adam& opt, const Options& o, const dates::Splits& data) {
  const int64_t steps_per_epoch = (o.train_size + o.batch - 1) / o.batch, total = o.epochs * steps_per_epoch;
  optim::LinearWarmupCosine schedule(opt, optim::WarmupDecayOptions(o.warmup, std::max<int64_t>(total, o.warmup + 1))
                                              .min_lr(o.lr / 20));
  const int first_epoch = int(opt.step_count() / std::max<int64_t>(1, steps_per_epoch));
  progress::Bar bar(total, first_epoch * steps_per_epoch);
  std::vector<double> losses;
  // Each epoch's batches from make_batches, in its order; a short last batch kept.
  auto loader = data::make_data_loader(Dates(data.train).map(data::transforms::Pad<Ids>(dates::kPad)),
                                       FixedBatchSampler(), data::DataLoaderOptions(o.batch));
  for (int epoch = first_epoch; epoch < o.epochs; ++epoch) {
    std::mt19937_64 rng(o.seed * 1000003 + epoch);
    auto batches = make_batches(o.train_size, o.batch, rng, data.train);
    bar.start_epoch(epoch + 1, o.epochs, batches.size());
    loader->sampler().set_batches(std::move(batches));
    int64_t s = 0;
    for (auto& padded : *loader) {
      Batch b = to_batch(padded);
      schedule.apply(opt, opt.step_count());
      Tensor logits = training_logits(model, b, o, rng);  // (B, T, V)
      Tensor loss = F::cross_entropy(logits.reshape({-1, dates::kTargetVocab}), b.tgt.reshape({b.tgt.numel()}),
                                     nn::CrossEntropyOptions().ignore_index(dates::kPad));
      opt.zero_grad();
      loss.backward();
      optim::clip_grad_norm_(model.parameters(), o.clip);
      opt.step();
      losses.push_back(loss.item());
      bar.update(++s, losses.back(), b.tokens);
    }
    std::printf("epoch %d/%d  validation exact match %.1f%%  lr %.2g\n", epoch + 1, o.epochs,
                100 * exact_match(model, data.valid, 1, o.length_alpha), schedule.lr_at(opt.step_count() - 1));
    if (!o.save.empty()) save_checkpoint(o.save, model, opt);
  }
  return losses;
}

// ------------------------------------------------------------------ output
// The attention of one translation as a text heat table: one row per output character,
// one column per source character, darker glyphs for larger alpha_tj.
void print_attention(const std::string& source, const seq2seq::Translation& y) {
  const char* shades = " .:-=+*#%@";
  std::printf("        %s\n", source.c_str());
  for (size_t t = 0; t < y.tokens.size(); ++t) {
    std::string row;
    for (float a : y.attention[t]) row += shades[std::min(9, int(a * 10))];
    std::printf("  %4s  %s\n", dates::target_token(y.tokens[t]).c_str(), row.c_str());
  }
}

// The attention of a finished translation of `one` (B = 1). The LSTM's rows come with its
// decoding steps. The Transformer's are its last decoder layer's cross-attention: y.attention
// gets their mean over heads, and the result holds each head's (H of T_out x S rows).
using HeadRows = std::vector<std::vector<std::vector<float>>>;
HeadRows attend(Seq2Seq::Impl&, const Batch&, seq2seq::Translation&) { return {}; }
HeadRows attend(TransformerSeq2Seq::Impl& model, const Batch& one, seq2seq::Translation& y) {
  Tensor w = model.cross_attention(one, y.tokens);  // (1, H, T, S)
  const int64_t H = w.size(1), T = w.size(2), S = w.size(3);
  std::vector<real> heads = w.to_vector(), mean = heed::mean(w, 1).to_vector();  // (H T, S), (T, S)
  HeadRows rows(H);
  y.attention.clear();
  for (int64_t t = 0; t < T; ++t) {
    y.attention.push_back(seq2seq::attention_row(mean, t, S, one.lengths[0]));
    for (int64_t h = 0; h < H; ++h) rows[h].push_back(seq2seq::attention_row(heads, h * T + t, S, one.lengths[0]));
  }
  return rows;
}

template <class Model>
seq2seq::Translation translate_one(Model& model, const std::string& text, const Options& o, HeadRows* heads = nullptr) {
  model.eval();
  std::vector<dates::Example> one = {{text, ""}};
  Batch b = seq2seq::make_batch(one, {0});
  seq2seq::Translation y = seq2seq::beam_search(model, b, o.beam, dates::kTargetLen + 1, o.length_alpha);
  HeadRows h = attend(model, b, y);
  if (heads) *heads = std::move(h);
  return y;
}

std::pair<int, int> draw_attention(const std::string& path, const std::string& source,
                                   const std::vector<std::vector<float>>& weights, const std::vector<int64_t>& tokens,
                                   const std::string& what, const plot::Font& font) {
  std::vector<std::string> src, outs;
  for (char c : source) src.push_back(plot::char_label(c));
  for (int64_t id : tokens) outs.push_back(dates::target_token(id));
  return plot::attention_heatmap(path, weights, src, outs,
                                 "\"" + source + "\" -> " + dates::decode_target(tokens) + "   (" + what + ")", font);
}

// The pictures of one translation: `stem`.png (the LSTM's attention, or the Transformer's
// last-layer cross-attention averaged over heads) and, for the Transformer, `stem`_head<h>.png.
// Returns the size of `stem`.png.
std::pair<int, int> draw_translation(const std::string& stem, const std::string& source, const seq2seq::Translation& y,
                                     const HeadRows& heads, const Options& o, const plot::Font& font) {
  const std::string what = o.model == "lstm" ? o.score : "last decoder layer, mean of " + std::to_string(heads.size()) + " heads";
  auto size = draw_attention(stem + ".png", source, y.attention, y.tokens, what, font);
  for (size_t h = 0; h < heads.size(); ++h)
    draw_attention(stem + "_head" + std::to_string(h + 1) + ".png", source, heads[h], y.tokens,
                   "last decoder layer, head " + std::to_string(h + 1), font);
  return size;
}

// Translations of a few test dates, with their attention as text.
template <class Model>
void show(Model& model, const std::vector<dates::Example>& test, const Options& o, int n) {
  for (int i = 0; i < n && i < int(test.size()); ++i) {
    seq2seq::Translation y = translate_one(model, test[i].source, o);
    std::string got = dates::decode_target(y.tokens);
    std::printf("\n\"%s\" -> %s  (%s, log p = %.4f)\n", test[i].source.c_str(), got.c_str(),
                got == test[i].target ? "right" : ("expected " + test[i].target).c_str(), y.log_prob);
    print_attention(test[i].source, y);
  }
}

// The longest of the first test dates: the most interesting picture.
size_t showcase(const std::vector<dates::Example>& test) {
  size_t best = 0;
  for (size_t i = 0; i < std::min<size_t>(test.size(), 50); ++i)
    if (test[i].source.size() > test[best].source.size()) best = i;
  return best;
}

// The graph backward() walks for the first output character of `ex` (heed::to_dot), cut at the
// step's inputs: the encoder states h_j, their projection and the state (s, cell, h~) coming
// in become leaves, so the picture is one decoder step. Parameters are labelled with their
// names and, after backward, the norms of their gradients.
void write_step_graph(Seq2Seq::Impl& model, const dates::Example& ex, const std::string& path) {
  Batch b = seq2seq::make_batch({ex}, {0});
  seq2seq::Encoded e = model.encode(b.src, b.lengths);
  auto cut = [](const Tensor& t) { return t.defined() ? t.detach().requires_grad_() : t; };
  e.keys = cut(e.keys), e.projected = cut(e.projected);
  seq2seq::DecoderState in = model.start(e);
  in = {cut(in.s), cut(in.cell), cut(in.feed)};
  seq2seq::Step step = model.step(IndexTensor(std::vector<int64_t>{dates::kStart}), in, e);  // logits (1, V)
  IndexTensor first(std::vector<int64_t>{b.tgt.data()[0]});
  Tensor loss = F::cross_entropy(step.logits, first);
  model.zero_grad();
  loss.backward();
  auto names = model.named_parameters();
  names.push_back({"h_j  encoder states", e.keys});
  if (e.projected.defined()) names.push_back({"keys projected once", e.projected});
  names.push_back({"s_{t-1}", in.s});
  names.push_back({"cell_{t-1}", in.cell});
  names.push_back({"h~_{t-1}  (input feeding)", in.feed});
  write_dot(path, loss, DotOptions().names(names).grad_norms(true).title(
      "one decoder step of \"" + ex.source + "\" (" + model.options.score() + " attention): loss of its first character"));
  model.zero_grad();
}

// ------------------------------------------------------------------ main
// Runs a load_checkpoint call; a checkpoint of another model gets a hint added to heed's message.
template <class F>
void load(const std::string& path, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (saved with another --model, --score or sizes?)");
  }
}

template <class Model>
int run_translate(Model& model, const Options& o) {
  const std::string path = o.resume.empty() ? o.save : o.resume;
  load(path, [&] { load_checkpoint(path, model); });
  HeadRows heads;
  seq2seq::Translation y = translate_one(model, o.translate, o, &heads);
  std::printf("\"%s\" -> %s  (beam %lld, log p = %.4f)\n", o.translate.c_str(), dates::decode_target(y.tokens).c_str(),
              (long long)o.beam, y.log_prob);
  print_attention(o.translate, y);
  plot::Font font;
  draw_translation(o.out + "/translation", o.translate, y, heads, o, font);
  std::printf("wrote %s/translation.png%s\n", o.out.c_str(), heads.empty() ? "" : " and translation_head<h>.png");
  return 0;
}

template <class Model>
int run_training(Model& model, const Options& o, std::chrono::steady_clock::time_point t0) {
  plot::Font font;  // fail now, not after training, if the font is missing
  dates::Splits data = make_data(o);
  optim::Adam opt(model.parameters(), optim::AdamOptions(o.lr));
  if (!o.resume.empty()) load(o.resume, [&] { load_checkpoint(o.resume, model, opt); });
  std::printf("data: %zu train / %zu valid / %zu test dates in %zu formats, e.g. \"%s\" -> %s\n", data.train.size(),
              data.valid.size(), data.test.size(), dates::formats().size(), data.train[0].source.c_str(),
              data.train[0].target.c_str());
  std::printf("model: %s, %lld parameters, %d threads, matmul precision %s\n", describe(model, o).c_str(),
              (long long)model.num_parameters(), get_num_threads(), get_float32_matmul_precision().c_str());

  std::vector<double> losses = train(model, opt, o, data);
  const double train_s = progress::seconds_since(t0);
  auto t_decode = std::chrono::steady_clock::now();
  const double greedy = exact_match(model, data.test, 1, o.length_alpha);
  const double greedy_s = progress::seconds_since(t_decode);
  t_decode = std::chrono::steady_clock::now();
  const double beam = o.beam > 1 ? exact_match(model, data.test, o.beam, o.length_alpha) : greedy;
  const double beam_s = progress::seconds_since(t_decode);
  std::printf("test decoding: greedy %.2f s, beam %lld %.2f s%s\n", greedy_s, (long long)o.beam, beam_s,
              o.model == "lstm" ? "" : o.no_cache ? " (recompute, --no-cache)" : " (KV cache)");

  show(model, data.test, o, o.smoke ? 1 : 3);
  const size_t k = showcase(data.test);
  const std::string prefix = o.out + (o.model == "lstm" ? "/" : "/transformer_");
  HeadRows heads;
  seq2seq::Translation y = translate_one(model, data.test[k].source, o, &heads);
  auto heat = draw_translation(prefix + "attention", data.test[k].source, y, heads, o, font);
  auto curve = plot::loss_curve(prefix + "loss.png", losses,
                                "date translation, " + (o.model == "lstm" ? o.score + " attention" : "Transformer"), font);
  if (!o.graph.empty()) {
    if constexpr (std::is_same_v<Model, Seq2Seq>) write_step_graph(model, data.test[k], o.graph);
    std::printf("wrote %s (render: dot -Tpng %s -o graph.png)\n", o.graph.c_str(), o.graph.c_str());
  }
  std::printf("\nwrote %sattention.png (%dx%d)%s and %sloss.png (%dx%d)%s%s\n", prefix.c_str(), heat.first, heat.second,
              heads.empty() ? "" : (", " + std::to_string(heads.size()) + " heads in " + prefix + "attention_head<h>.png").c_str(),
              prefix.c_str(), curve.first, curve.second, o.save.empty() || losses.empty() ? "" : ", checkpoint ",
              o.save.empty() || losses.empty() ? "" : o.save.c_str());

  std::printf("test exact match: %.1f%% greedy, %.1f%% beam %lld, on %zu unseen dates | training %.1f s, "
              "total %.1f s wall, %d threads\n",
              100 * greedy, 100 * beam, (long long)o.beam, data.test.size(), train_s, progress::seconds_since(t0),
              get_num_threads());

  if (100 * greedy < o.min_accuracy) {
    std::printf("test exact match %.1f%% is below --min-accuracy %.1f%%\n", 100 * greedy, o.min_accuracy);
    return 1;
  }
  if (o.smoke) {  // the checks make test relies on
    auto mean = [&](size_t from, size_t n) {
      double s = 0;
      for (size_t i = from; i < from + n; ++i) s += losses[i];
      return s / n;
    };
    const size_t n = std::min<size_t>(5, losses.size() / 2);
    const bool falls = n > 0 && mean(losses.size() - n, n) < 0.8 * mean(0, n);
    bool pngs = plot::png_size(prefix + "attention.png") == heat && plot::png_size(prefix + "loss.png") == curve &&
                heat.first > 100 && heat.second > 100;
    for (size_t h = 0; h < heads.size(); ++h)
      pngs = pngs && plot::png_size(prefix + "attention_head" + std::to_string(h + 1) + ".png").first > 100;
    std::printf("smoke: loss %.3f -> %.3f (%s), PNGs %s\n", n ? mean(0, n) : 0.0, n ? mean(losses.size() - n, n) : 0.0,
                falls ? "falls" : "DOES NOT FALL", pngs ? "valid" : "INVALID");
    return falls && pngs ? 0 : 1;
  }
  return 0;
}

// Builds the model --model names, then translates one date or trains.
int run(const Options& o, std::chrono::steady_clock::time_point t0) {
  set_float32_matmul_precision(o.precision);
  if (o.model == "transformer") {
    auto model = make_transformer(o);
    return o.translate.empty() ? run_training(*model, o, t0) : run_translate(*model, o);
  }
  auto model = make_lstm(o);
  return o.translate.empty() ? run_training(*model, o, t0) : run_translate(*model, o);
}

int main(int argc, char** argv) {
  const auto t0 = std::chrono::steady_clock::now();
  return program::run("translate", kUsage, argc, argv, parse_options, [&](const Options& o) { return run(o, t0); });
}
