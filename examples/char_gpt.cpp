// char_gpt.cpp - a GPT-style character language model (Radford et al. 2018/2019, "GPT",
// "GPT-2"; the Transformer of Vaswani et al. 2017 with pre-norm blocks, Xiong et al. 2020).
//
// It reads a text, learns p(next character | the previous `block` characters), and writes
// new text from a prompt. Read top to bottom:
//   Options        every setting and its default (the "baby GPT": block 64, batch 12,
//                  4 layers, 4 heads, width 128)
//   Corpus         any UTF-8 file, or by default the Debian `fortunes` package's files
//                  concatenated in sorted order; characters are code points; 90% / 10%
//                  train / validation split (the validation text is the file's end)
//   batches        heed::data: a dataset of the text's windows of `block` characters and the
//                  characters that follow them, stacked `batch` a batch by a data loader
//                  whose RandomSampler shuffles all the windows each epoch
//   GPT            (common/gpt.h) embedding + positions (learned | sinusoidal | rotary) -> N blocks
//                  -> norm -> logits, with nanoGPT's module names and its output layer tied to the
//                  embedding; built from a GPTConfig that config() fills from the options
//   train          AdamW with decoupled weight decay on the matrices only (Loshchilov & Hutter
//                  2019), linear warmup + cosine decay, gradient clipping, validation loss
//                  every eval interval, checkpoints
//   generate       (common/gpt.h) continues the prompt with nn::sample: temperature, top-k,
//                  top-p (layers/sampling.h); the context is the last `block` characters.
//                  gpt::cached_step keeps each layer's keys and values, so a character costs a
//                  forward of one position while the text fits the block; past it the last
//                  `block` characters are re-encoded each step, as nanoGPT's crop (gpt.h says
//                  why a sliding cache would not be the same model). --no-cache recomputes.
//
// One block (pre-norm, causal):
//   x = x + Dropout(W_o · Attention(rope?(LN1(x) W_q), rope?(LN1(x) W_k), LN1(x) W_v))
//   x = x + Dropout(W_2 · GELU(W_1 · LN2(x)))
// Attention = softmax(Q K^T / sqrt(D) + causal mask) V per head, computed by heed's tiled
// ("flash") kernel, which never forms the (T, T) scores (Dao et al. 2022).
// Shapes: B batch, T time (<= block), E width, H heads, D = E / H head width, V vocabulary.
//
//   build/examples/char_gpt                              train the baby GPT on the fortunes
//   build/examples/char_gpt --text book.txt --pos rope --save book.ckpt
//   build/examples/char_gpt --resume book.ckpt --text book.txt --iters 0 --prompt "The " --samples 3
//   build/examples/char_gpt --text book.txt --export book.safetensors     nanoGPT's GPT loads it
//   build/examples/char_gpt --text book.txt --import nanogpt.safetensors  continue nanoGPT's model
//
// Data parallel (README "Training on several processes"): built with -DHEED_WITH_MPI
// (`make build/examples/char_gpt_mpi`), `mpirun -np N build/examples/char_gpt_mpi` trains
// on N processes, each on its own --batch sequences per step, with averaged gradients
// (optim/distributed_mpi.h): the global batch is N * --batch. Each process reads its own
// part of every epoch's shuffle of the windows (a data::DistributedSampler for the
// RandomSampler). Rank 0 prints and saves.
#include <heed/heed.h>
#ifdef HEED_WITH_MPI
#include <heed/optim/distributed_mpi.h>
#endif

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "common/args.h"
#include "common/gpt.h"
#include "common/plots.h"
#include "common/program.h"
#include "common/progress.h"

using namespace heed;
namespace F = heed::nn::functional;

// ------------------------------------------------------------------ options
struct Options {
  std::string text = "/usr/share/games/fortunes";  // a file, or a directory of fortune files
  // model: the baby GPT
  int64_t block = 64, layers = 4, heads = 4, width = 128;
  double dropout = 0.1;
  std::string pos = "learned";  // learned | sinusoidal | rope
  // training
  int64_t batch = 12, iters = 2000, warmup = 100, eval_interval = 200, eval_iters = 20;
  double lr = 2e-3, min_lr = 1e-4, weight_decay = 0.1, clip = 1.0, valid_fraction = 0.1;
  // sampling
  std::string prompt = "The ";
  double temperature = 0.8, top_p = 1.0;
  int64_t top_k = 20, samples = 2, sample_len = 300;
  bool no_cache = false;  // recompute the context every step instead of gpt::cached_step
  // running
  uint64_t seed = 1;
  int threads = 1;  // see examples/translate.cpp and the README: spinning OpenMP threads on a shared machine
  std::string precision = "highest";  // heed::set_float32_matmul_precision (README, "Mixed precision")
  std::string out = "build/char_gpt", save, resume;
  std::string export_path, import_path, dump_logits;  // safetensors files (nanoGPT's names)
  bool smoke = false;
};

const char* kUsage =
    "usage: char_gpt [options]\n"
    "  train a GPT-style character language model, then sample from it\n"
    "  --text PATH          UTF-8 text file, or a directory of fortune files (/usr/share/games/fortunes)\n"
    "  --block N            context length in characters                   (64)\n"
    "  --layers N --heads N --width N   model size                         (4 4 128)\n"
    "  --pos P              learned | sinusoidal | rope                    (learned)\n"
    "  --dropout X          residual and embedding dropout                 (0.1)\n"
    "  --batch N            sequences per step                             (12)\n"
    "  --iters N            training steps (0: only sample a checkpoint)   (2000)\n"
    "  --lr X --min-lr X    peak and final AdamW learning rate             (0.002 0.0001)\n"
    "  --warmup N           linear warmup steps, then cosine decay         (100)\n"
    "  --weight-decay X     AdamW decoupled weight decay (matrices only)   (0.1)\n"
    "  --clip X             gradient norm clipping                         (1)\n"
    "  --eval-interval N    steps between validation losses                (200)\n"
    "  --eval-iters N       batches per loss estimate                      (20)\n"
    "  --valid-fraction X   the text's end held out for validation         (0.1)\n"
    "  --prompt TEXT        start of every sample                          (\"The \")\n"
    "  --temperature X      divide the logits by X (0: greedy)             (0.8)\n"
    "  --top-k N            sample among the N likeliest (0: all)          (20)\n"
    "  --top-p X            sample among the likeliest whose probability reaches X\n"
    "                       (nucleus sampling, after top-k; 1: all)        (1)\n"
    "  --no-cache           recompute the whole context for every character, instead of\n"
    "                       keeping each layer's keys and values (a KV cache) and running\n"
    "                       the model on the new character only; both give the same text.\n"
    "                       Past --block characters both use the last --block, re-encoded\n"
    "                       from position 0 (nanoGPT's crop): then each character costs a\n"
    "                       forward of --block positions with or without the cache\n"
    "  --samples N --sample-len N   how many samples, characters each      (2 300)\n"
    "  --seed N             initialisation, batches and sampling           (1)\n"
    "  --threads N          threads (0: every core)                        (1)\n"
    "  --precision P        matmul precision: highest, high or medium (bf16 inputs) (highest)\n"
    "  --out DIR            loss curve and default checkpoint              (build/char_gpt)\n"
    "  --save FILE          checkpoint at every evaluation                 (DIR/char_gpt.ckpt)\n"
    "  --resume FILE        continue from a checkpoint (same --text and sizes)\n"
    "  --export FILE        after training, write the weights as safetensors with nanoGPT's names\n"
    "                       and the vocabulary in its metadata\n"
    "  --import FILE        start from safetensors weights (an --export, or nanoGPT's GPT saved\n"
    "                       with bias=True; same sizes and --pos learned)\n"
    "  --dump-logits FILE   after training, write the prompt's ids and logits as safetensors\n"
    "                       (to check an exported model in another framework)\n"
    "  --smoke              a few seconds at tiny sizes; exits 1 unless the loss falls\n"
    "                       and the PNG is valid (part of make test)\n"
    "  --help\n";

Options parse_options(int argc, char** argv, bool& help) {
  args::Parser p(argc, argv, {"help", "smoke", "no-cache"});
  Options o;
  help = p.flag("help");
  o.smoke = p.flag("smoke");
  if (o.smoke) {  // tiny sizes on a slice of the corpus; every other option may still override them
    o.block = 16, o.layers = 1, o.heads = 2, o.width = 32, o.batch = 8, o.iters = 120, o.warmup = 5;
    o.eval_interval = 60, o.eval_iters = 2, o.lr = 1e-2, o.samples = 1, o.sample_len = 40, o.out = "build/smoke";
    o.dropout = 0;
  }
  o.text = p.get("text", o.text);
  o.block = p.get_int("block", o.block, 2, 4096);
  o.layers = p.get_int("layers", o.layers, 1, 64);
  o.heads = p.get_int("heads", o.heads, 1, 64);
  o.width = p.get_int("width", o.width, 2, 4096);
  o.pos = p.get("pos", o.pos);
  if (o.pos != "learned" && o.pos != "sinusoidal" && o.pos != "rope")
    throw args::UsageError("--pos must be learned, sinusoidal or rope, got '" + o.pos + "'");
  if (o.width % o.heads != 0)
    throw args::UsageError("--width " + std::to_string(o.width) + " is not a multiple of --heads " + std::to_string(o.heads));
  if (o.pos == "rope" && (o.width / o.heads) % 2 != 0)
    throw args::UsageError("--pos rope needs an even head width (--width / --heads)");
  o.dropout = p.get_double("dropout", o.dropout, 0, 0.9);
  o.batch = p.get_int("batch", o.batch, 1, 4096);
  o.iters = p.get_int("iters", o.iters, 0, 10000000);
  o.lr = p.get_double("lr", o.lr, 1e-7, 1);
  o.min_lr = p.get_double("min-lr", o.min_lr, 0, 1);
  o.warmup = p.get_int("warmup", o.warmup, 0, 10000000);
  o.weight_decay = p.get_double("weight-decay", o.weight_decay, 0, 10);
  o.clip = p.get_double("clip", o.clip, 1e-6, 1e6);
  o.eval_interval = p.get_int("eval-interval", o.eval_interval, 1, 10000000);
  o.eval_iters = p.get_int("eval-iters", o.eval_iters, 1, 100000);
  o.valid_fraction = p.get_double("valid-fraction", o.valid_fraction, 0.01, 0.5);
  o.prompt = p.get("prompt", o.prompt);
  o.temperature = p.get_double("temperature", o.temperature, 0, 100);
  o.top_k = p.get_int("top-k", o.top_k, 0, 1000000);
  o.top_p = p.get_double("top-p", o.top_p, 0, 1);
  if (o.top_p <= 0) throw args::UsageError("--top-p must be in (0, 1], got 0");
  o.no_cache = p.flag("no-cache");
  o.samples = p.get_int("samples", o.samples, 0, 1000);
  o.sample_len = p.get_int("sample-len", o.sample_len, 1, 100000);
  o.seed = p.get_int("seed", o.seed, 0, INT64_MAX);
  o.threads = p.get_int("threads", o.threads, 0, 1024);
  o.precision = p.get("precision", o.precision);
  if (o.precision != "highest" && o.precision != "high" && o.precision != "medium")
    throw args::UsageError("--precision must be highest, high or medium, got '" + o.precision + "'");
  o.out = p.get("out", o.out);
  o.save = p.get("save", o.out + "/char_gpt.ckpt");
  o.resume = p.get("resume", "");
  o.export_path = p.get("export", "");
  o.import_path = p.get("import", "");
  o.dump_logits = p.get("dump-logits", "");
  if (o.iters == 0 && o.resume.empty() && o.import_path.empty())
    throw args::UsageError("--iters 0 samples a trained model: give --resume FILE or --import FILE");
  p.finish();
  return o;
}

// ------------------------------------------------------------------ corpus
// The bytes of `path`, or of every fortune file in a directory: the regular files sorted by
// name, skipping the strfile indexes (*.dat) and the *.u8 links, joined in that order.
std::string read_text(const std::string& path) {
  auto slurp = [](const std::string& file) {
    std::ifstream f(file, std::ios::binary);
    if (!f) throw std::runtime_error("cannot read " + file);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw std::runtime_error("cannot read " + path + " (no such file or directory)");
  if (!S_ISDIR(st.st_mode)) return slurp(path);
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (!dir) throw std::runtime_error("cannot read directory " + path);
  while (dirent* e = ::readdir(dir)) {
    std::string n = e->d_name, full = path + "/" + n;
    auto ends = [&](const char* s) { return n.size() >= std::strlen(s) && n.compare(n.size() - std::strlen(s), std::string::npos, s) == 0; };
    struct stat fs;
    if (n[0] == '.' || ends(".dat") || ends(".u8") || ::lstat(full.c_str(), &fs) != 0 || !S_ISREG(fs.st_mode)) continue;
    names.push_back(n);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  std::string all;
  for (const auto& n : names) all += slurp(path + "/" + n);
  return all;
}

// UTF-8 -> code points; throws naming the byte offset of the first malformed sequence.
std::vector<int32_t> decode_utf8(const std::string& s, const std::string& what) {
  std::vector<int32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = n > 0 && i + n <= s.size();
    int32_t cp = n == 1 ? c : c & (0xff >> (n + 1));
    for (int k = 1; ok && k < n; ++k) {
      ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 2;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if (!ok) throw std::runtime_error(what + " is not UTF-8 text (bad byte at offset " + std::to_string(i) + ")");
    out.push_back(cp);
    i += n;
  }
  return out;
}

std::string encode_utf8(int32_t cp) {
  std::string s;
  if (cp < 0x80) s += char(cp);
  else if (cp < 0x800) s += char(0xC0 | (cp >> 6)), s += char(0x80 | (cp & 0x3F));
  else if (cp < 0x10000) s += char(0xE0 | (cp >> 12)), s += char(0x80 | ((cp >> 6) & 0x3F)), s += char(0x80 | (cp & 0x3F));
  else s += char(0xF0 | (cp >> 18)), s += char(0x80 | ((cp >> 12) & 0x3F)), s += char(0x80 | ((cp >> 6) & 0x3F)), s += char(0x80 | (cp & 0x3F));
  return s;
}

// The text as ids into a vocabulary of its distinct characters (sorted by code point), split
// into the first (1 - valid_fraction) for training and the rest for validation.
struct Corpus {
  std::vector<int32_t> chars;                // id -> code point
  std::map<int32_t, int64_t> id;             // code point -> id
  std::vector<int64_t> train, valid;         // ids
  int64_t vocab() const { return chars.size(); }
  std::string decode(const std::vector<int64_t>& ids) const {
    std::string s;
    for (int64_t i : ids) s += encode_utf8(chars[i]);
    return s;
  }
};

Corpus make_corpus(const Options& o) {
  std::vector<int32_t> cps = decode_utf8(read_text(o.text), o.text);
  if (o.smoke) cps.resize(std::min<size_t>(cps.size(), 20000));
  if (cps.empty()) throw std::runtime_error("the corpus " + o.text + " is empty");
  Corpus c;
  c.chars = cps;
  std::sort(c.chars.begin(), c.chars.end());
  c.chars.erase(std::unique(c.chars.begin(), c.chars.end()), c.chars.end());
  for (size_t i = 0; i < c.chars.size(); ++i) c.id[c.chars[i]] = i;
  const size_t n_train = size_t(cps.size() * (1 - o.valid_fraction));
  for (size_t i = 0; i < cps.size(); ++i) (i < n_train ? c.train : c.valid).push_back(c.id[cps[i]]);
  const size_t need = o.block + 1;
  if (c.train.size() < need || c.valid.size() < need)
    throw std::runtime_error("the corpus " + o.text + " has " + std::to_string(cps.size()) + " characters: too few for --block " +
                             std::to_string(o.block) + " with a validation split");
  return c;
}

// ------------------------------------------------------------------ batches (heed::data)
// The windows of a text as a dataset: example i is x = ids[i, i+T) and the characters that
// follow them, y = ids[i+1, i+T+1); a text of N ids has N - T. transforms::Stack collates B
// of them into x (B, T) and y (B, T).
using Window = data::Example<IndexTensor, IndexTensor>;
struct Windows : data::datasets::Dataset<Windows, Window> {
  Windows(const std::vector<int64_t>& ids, int64_t T) : ids(&ids), T(T) {}
  ExampleType get(size_t i) override {
    const auto x = ids->begin() + i;
    return {IndexTensor(std::vector<int64_t>(x, x + T)), IndexTensor(std::vector<int64_t>(x + 1, x + T + 1))};
  }
  std::optional<size_t> size() const override { return ids->size() - T; }
  const std::vector<int64_t>* ids;  // the corpus's, which outlives the loaders
  int64_t T;
};

// A data loader read one batch at a time: next() is its next batch, and when an epoch runs
// out it starts the next one (a new begin()), so the loops count steps, not epochs, and a
// small text is read again. A RandomSampler draws a new order at each begin(); a
// data::DistributedSampler shuffles by seed + epoch, so it is told each new epoch.
template <class Loader>  // std::unique_ptr<data::DataLoader<...>>, as make_data_loader returns
class Batches {
 public:
  explicit Batches(Loader loader) : loader_(std::move(loader)), it_(loader_->end()) {}
  Window& next() {
    if (it_ != loader_->end()) ++it_;
    if (it_ == loader_->end()) {
      if constexpr (std::is_base_of_v<data::DistributedSampler, std::decay_t<decltype(loader_->sampler())>>)
        loader_->sampler().set_epoch(epoch_);
      ++epoch_;
      it_ = loader_->begin();
      if (it_ == loader_->end())
        throw Error("fewer windows of --block characters than --batch: give a longer text or a smaller --batch");
    }
    return *it_;
  }

 private:
  Loader loader_;
  typename Loader::element_type::Iterator it_;
  int64_t epoch_ = 0;
};

// ------------------------------------------------------------------ model
// The GPT itself is in common/gpt.h (with nanoGPT's module names); the sizes come from the
// options.
using gpt::GPT;

gpt::GPTConfig config(const Options& o, int64_t V) {
  return gpt::GPTConfig().block_size(o.block).vocab_size(V).n_layer(o.layers).n_head(o.heads).n_embd(o.width)
      .dropout(o.dropout).pos(o.pos);
}

// ------------------------------------------------------------------ processes
// What training needs to know about the other processes. Without HEED_WITH_MPI there is one,
// and every call below is the one-process answer; with it, the calls go to heed::dist.
struct Processes {
  int rank = 0, world = 1;
#ifdef HEED_WITH_MPI
  std::unique_ptr<dist::GradientAverager> sync;
  explicit Processes(GPT& model) : rank(dist::rank()), world(dist::world_size()) {
    dist::broadcast_parameters(*model);  // rank 0's initial weights everywhere
    sync = std::make_unique<dist::GradientAverager>(*model);
  }
  void average_gradients() { sync->synchronize(); }
  void save(const std::string& path, GPT& model, optim::AdamW& opt) { dist::save_checkpoint_on_rank0(path, *model, opt); }
  void load(const std::string& path, GPT& model, optim::AdamW& opt) { dist::load_checkpoint_on_all_ranks(path, *model, opt); }
#else
  explicit Processes(GPT&) {}
  void average_gradients() {}
  void save(const std::string& path, GPT& model, optim::AdamW& opt) { save_checkpoint(path, model, opt); }
  void load(const std::string& path, GPT& model, optim::AdamW& opt) { load_checkpoint(path, model, opt); }
#endif
};

// ------------------------------------------------------------------ training
// Mean loss over the next --eval-iters batches of `batches`, without dropout or a graph.
template <class Loader>
double estimate_loss(GPT& model, Batches<Loader>& batches, int64_t V, const Options& o) {
  NoGradGuard no_grad;
  model->eval();
  double sum = 0;
  for (int64_t i = 0; i < o.eval_iters; ++i) {
    const Window& batch = batches.next();  // data (B, T), target (B, T)
    sum += F::cross_entropy(model->forward(batch.data).reshape({-1, V}), batch.target.reshape({batch.data.numel()})).item();
  }
  model->train();
  return sum / o.eval_iters;
}

struct TrainResult {
  std::vector<double> losses;  // every step's training loss
  double valid_loss = 0, tokens_per_s = 0;
};

TrainResult train(GPT& model, optim::AdamW& opt, const Options& o, const Corpus& c, Processes& procs) {
  optim::LinearWarmupCosine schedule(
      opt, optim::WarmupDecayOptions(o.warmup, std::max<int64_t>(o.iters, o.warmup + 1)).min_lr(o.min_lr));
  const int64_t first = opt.step_count(), intervals = (o.iters + o.eval_interval - 1) / o.eval_interval;
  const auto batch_of_windows = data::DataLoaderOptions().batch_size(o.batch).drop_last(true);
  auto windows_of = [&](const std::vector<int64_t>& ids) { return Windows(ids, o.block).map(data::transforms::Stack<Window>()); };
  // heed's generator draws the training batches' order (a RandomSampler at each epoch) and the
  // dropout masks. Its seed counts the steps done, so that a resumed run does not replay the
  // batches of the run it continues, and the rank, so that each process has its own masks.
  manual_seed(o.seed * 7919 + first + 1000003 * procs.rank);
#ifdef HEED_WITH_MPI
  // Each process reads its own part of every epoch's shuffle, drawn from a seed all of them
  // share (data::samplers::DistributedRandomSampler is this sampler under libtorch's name,
  // whose constructor takes no seed).
  const auto shards = data::DistributedSamplerOptions(int64_t(c.train.size()) - o.block, procs.rank, procs.world)
                          .seed(o.seed * 7919 + first);
  Batches batches(data::make_data_loader(windows_of(c.train), data::DistributedSampler(shards), batch_of_windows));
#else
  Batches batches(data::make_data_loader(windows_of(c.train), batch_of_windows));  // a RandomSampler
#endif
  // The loss estimates read windows in an order of their own, from samplers seeded by --seed
  // alone: the figures repeat for a seed, and evaluating draws nothing from training's generator.
  auto seeded = [&](const std::vector<int64_t>& ids, uint64_t seed) {
    return data::DistributedSampler(data::DistributedSamplerOptions(int64_t(ids.size()) - o.block, 0, 1).seed(seed));
  };
  Batches valid_batches(data::make_data_loader(windows_of(c.valid), seeded(c.valid, o.seed + 17), batch_of_windows));
  Batches train_eval_batches(data::make_data_loader(windows_of(c.train), seeded(c.train, o.seed + 18), batch_of_windows));
  progress::Bar bar(o.iters, first, "interval");
  TrainResult r;
  double tokens = 0, seconds = 0;
  for (int64_t step = first; step < o.iters;) {
    const int64_t interval = step / o.eval_interval, end = std::min(o.iters, (interval + 1) * o.eval_interval);
    bar.start_epoch(interval + 1, intervals, end - interval * o.eval_interval);
    const auto t0 = std::chrono::steady_clock::now();
    tokens += double(end - step) * o.batch * o.block * procs.world;
    for (; step < end; ++step) {
      const Window& batch = batches.next();  // data: windows (B, T), target: their next characters (B, T)
      schedule.apply(opt, opt.step_count());
      Tensor logits = model->forward(batch.data);  // (B, T, V)
      Tensor loss = F::cross_entropy(logits.reshape({-1, c.vocab()}), batch.target.reshape({batch.data.numel()}));
      opt.zero_grad();
      loss.backward();
      procs.average_gradients();  // every process now holds the same gradient
      optim::clip_grad_norm_(model->parameters(), o.clip);
      opt.step();
      r.losses.push_back(loss.item());
      bar.update(step + 1 - interval * o.eval_interval, r.losses.back(), batch.data.numel() * procs.world);
    }
    seconds += progress::seconds_since(t0);
    r.valid_loss = estimate_loss(model, valid_batches, c.vocab(), o);
    std::printf("step %lld: train loss %.4f, validation loss %.4f, lr %.2g\n", (long long)step,
                estimate_loss(model, train_eval_batches, c.vocab(), o), r.valid_loss, schedule.lr_at(opt.step_count() - 1));
    if (!o.save.empty()) procs.save(o.save, model, opt);
  }
  r.tokens_per_s = seconds > 0 ? tokens / seconds : 0;
  return r;
}

// ------------------------------------------------------------------ safetensors
// The vocabulary as one UTF-8 string, its characters in id order (nanoGPT's char-level
// prepare.py sorts them the same way, by code point).
std::string vocabulary(const Corpus& c) { return c.decode([&] {
  std::vector<int64_t> ids(c.vocab());
  for (int64_t i = 0; i < c.vocab(); ++i) ids[i] = i;
  return ids;
}()); }

void export_model(const std::string& path, const GPT& model, const Options& o, const Corpus& c) {
  safetensors::save_model(model, path,
                          {{"format", "pt"}, {"vocab", vocabulary(c)}, {"vocab_size", std::to_string(c.vocab())},
                           {"n_layer", std::to_string(o.layers)}, {"n_head", std::to_string(o.heads)},
                           {"n_embd", std::to_string(o.width)}, {"block_size", std::to_string(o.block)},
                           {"pos", o.pos}});
  std::printf("exported %s (safetensors, nanoGPT's names)\n", path.c_str());
}

// Loads every parameter; the file may also hold nanoGPT's causal-mask buffers
// (transformer.h.{i}.attn.bias), which heed's flash attention does not need.
void import_model(const std::string& path, GPT& model, const Corpus& c) {
  const safetensors::Contents f = safetensors::load_file(path);
  const auto vocab = f.metadata.find("vocab");
  if (vocab != f.metadata.end() && vocab->second != vocabulary(c))
    throw Error("--import " + path + ": its vocabulary differs from this --text's (train and import on the same text)");
  nn::IncompatibleKeys r = model->load_state_dict(f.tensors, /*strict=*/false);
  // A file may hold a tied tensor under one of its names (safetensors.torch.save_model keeps
  // one): a missing key is loaded if another name of the same tensor was.
  std::map<std::string, const TensorImpl*> impl_of;
  for (const auto& [k, t] : model->state_dict()) impl_of[k] = t.impl();
  std::set<const TensorImpl*> loaded;
  for (const auto& [k, t] : f.tensors)
    if (impl_of.count(k)) loaded.insert(impl_of[k]);
  r.missing_keys.erase(std::remove_if(r.missing_keys.begin(), r.missing_keys.end(),
                                      [&](const std::string& k) { return loaded.count(impl_of[k]) > 0; }),
                       r.missing_keys.end());
  std::vector<std::string> unexpected;
  for (const std::string& k : r.unexpected_keys)
    if (k.size() < 10 || k.compare(k.size() - 10, 10, ".attn.bias") != 0) unexpected.push_back(k);
  if (!r.missing_keys.empty() || !unexpected.empty()) {
    std::string msg = "--import " + path + ": it does not match this model (same --layers, --width, --block, --pos?):";
    for (const std::string& k : r.missing_keys) msg += " missing '" + k + "'";
    for (const std::string& k : unexpected) msg += " unexpected '" + k + "'";
    throw Error(msg);
  }
  std::printf("imported %s: %zu tensors%s\n", path.c_str(), f.tensors.size() - r.unexpected_keys.size(),
              r.unexpected_keys.empty() ? "" : " (nanoGPT's causal-mask buffers ignored)");
}

// The prompt's ids (1, T) and the model's logits (1, T, V), evaluation mode, no graph.
void dump_logits(const std::string& path, GPT& model, const std::vector<int64_t>& prompt) {
  NoGradGuard no_grad;
  model->eval();
  const int64_t T = std::min<int64_t>(prompt.size(), model->block());
  const std::vector<int64_t> ids(prompt.begin(), prompt.begin() + T);
  const Tensor logits = model->forward(IndexTensor(ids, {1, T}));
  safetensors::save_file({{"ids", from_vector(std::vector<real>(ids.begin(), ids.end()), {1, T})}, {"logits", logits}}, path);
  model->train();
}

// ------------------------------------------------------------------ main
int run(const Options& o, std::chrono::steady_clock::time_point t0) {
  plot::Font font;  // fail now, not after training, if the font is missing
  set_float32_matmul_precision(o.precision);
  Corpus c = make_corpus(o);
  std::vector<int64_t> prompt;
  for (int32_t cp : decode_utf8(o.prompt, "--prompt")) {
    auto it = c.id.find(cp);
    if (it == c.id.end()) throw std::runtime_error("--prompt has the character '" + encode_utf8(cp) + "', which the corpus never uses");
    prompt.push_back(it->second);
  }
  if (prompt.empty()) prompt.push_back(c.id.count('\n') ? c.id['\n'] : 0);

  manual_seed(o.seed);
  GPT model(config(o, c.vocab()));
  // AdamW decays the matrices (embeddings, projections) but not biases and LayerNorm gains.
  std::vector<Tensor> decay, no_decay;
  for (const Tensor& p : model->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  // (The options are set one statement each so that they stay AdamWOptions, not the
  // AdamOptions& a chained base-class setter returns.)
  optim::AdamWOptions defaults(o.lr), without_decay(o.lr);
  defaults.betas({0.9, 0.99});
  defaults.weight_decay(o.weight_decay);
  without_decay.betas({0.9, 0.99});
  without_decay.weight_decay(0);
  optim::AdamW opt({optim::ParamGroup(decay), optim::ParamGroup(no_decay, without_decay)}, defaults);
  if (!o.import_path.empty()) import_model(o.import_path, model, c);  // every process reads it
  Processes procs(model);
  if (!o.resume.empty()) {
    try {
      procs.load(o.resume, model, opt);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + " (saved with another --text, --pos or model size?)");
    }
  }
  std::printf("data: %s, %zu characters (%zu train / %zu validation), vocabulary %lld\n", o.text.c_str(),
              c.train.size() + c.valid.size(), c.train.size(), c.valid.size(), (long long)c.vocab());
  std::printf("model: %lld layers, %lld heads, width %lld, block %lld, %s positions, %lld parameters, %d threads"
              " x %d processes, matmul precision %s\n", (long long)o.layers, (long long)o.heads, (long long)o.width,
              (long long)o.block, o.pos.c_str(), (long long)model->num_parameters(), get_num_threads(), procs.world,
              get_float32_matmul_precision().c_str());

  TrainResult r;
  if (opt.step_count() < o.iters) r = train(model, opt, o, c, procs);
  const double train_s = progress::seconds_since(t0);

  if (procs.rank != 0) return 0;  // the others hold the same model: rank 0 samples and plots
  if (!o.export_path.empty()) export_model(o.export_path, model, o, c);
  if (!o.dump_logits.empty()) dump_logits(o.dump_logits, model, prompt);
  heed::manual_seed(o.seed + 99);  // the samples repeat for a seed, whatever training drew
  const auto sampling = nn::SamplingOptions().temperature(o.temperature).top_k(o.top_k).top_p(o.top_p);
  // One step for every sample: the cached step starts afresh on each new prompt.
  const gpt::Step step = o.no_cache ? gpt::recompute_step(*model) : gpt::cached_step(*model, 1);
  for (int64_t s = 0; s < o.samples; ++s) {
    const IndexTensor ids = gpt::generate(*model, IndexTensor(prompt, {1, int64_t(prompt.size())}), o.sample_len, sampling, step);
    std::printf("\n--- sample %lld (temperature %g, top-k %lld, top-p %g) ---\n%s\n", (long long)s + 1, o.temperature,
                (long long)o.top_k, o.top_p, c.decode(ids.vec()).c_str());
  }
  if (r.losses.empty()) return 0;

  auto curve = plot::loss_curve(o.out + "/loss.png", r.losses, "character GPT, " + o.pos + " positions", font);
  std::printf("\nwrote %s/loss.png (%dx%d)%s%s\n", o.out.c_str(), curve.first, curve.second,
              o.save.empty() ? "" : ", checkpoint ", o.save.c_str());
  std::printf("validation loss %.4f (%.3f bits per character) after %lld steps | %.0f tokens/s, training %.1f s, "
              "total %.1f s wall, %d threads\n",
              r.valid_loss, r.valid_loss / std::log(2.0), (long long)o.iters, r.tokens_per_s, train_s,
              progress::seconds_since(t0), get_num_threads());
  if (o.smoke) {  // the checks make test relies on
    double first, last;
    const bool falls = program::loss_falls(r.losses, 0.8, first, last, 5);
    const bool png = plot::png_size(o.out + "/loss.png") == curve && curve.first > 100;
    std::printf("smoke: loss %.3f -> %.3f (%s), PNG %s\n", first, last, falls ? "falls" : "DOES NOT FALL", png ? "valid" : "INVALID");
    return falls && png ? 0 : 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  const auto t0 = std::chrono::steady_clock::now();
#ifdef HEED_WITH_MPI
  dist::MpiGuard mpi(argc, argv);
  if (dist::rank() != 0) std::freopen("/dev/null", "w", stdout);  // rank 0 speaks for all
#endif
  return program::run("char_gpt", kUsage, argc, argv, parse_options, [&](const Options& o) { return run(o, t0); });
}
