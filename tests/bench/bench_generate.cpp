// bench_generate.cpp - generation speed of the GPT of examples/common/gpt.h: a prompt, then
// new tokens one at a time; the PyTorch twin is bench_generate_torch.py, which also drives both
// and prints the table (`make bench`).
//
//   build/bench/bench_generate [--prompt 512] [--new 512] [--batch 1] [--window 64]
//                              [--paths cached,recompute] [--precision highest|medium]
//       prints, for each decoding path, one line
//       "PATH B <b> prefill_ms <ms> first_ms <ms> last_ms <ms> total_s <s> tokens_per_s <r> new <n>"
//
// --precision sets heed::set_float32_matmul_precision (core/matmul_precision.h) for the run.
//
// The paths: "cached" (gpt::cached_step: the prompt prefilled in one forward, then one
// position per token through a KV cache per block) and "recompute" (gpt::recompute_step:
// the whole context every token, as nanoGPT's generate()).
//
// The model has GPT-small's shapes (6 layers, 6 heads, width 384, vocabulary 65) and
// block_size 1024, so that a 512-token prompt and 512 new tokens never crop the context;
// random weights (GPT-2's initialisation, seed 0), dropout 0, evaluation mode, no graph.
// The tokens are the same on both sides: the prompt and the "sampled" tokens come from one
// 64-bit LCG (Knuth's MMIX constants) that bench_generate_torch.py repeats, so both models
// read the same sequences whatever their random weights predict. Each step still chooses a
// token from its logits (nn::sample, greedy) and pays for it; the scripted token is appended.
//
// Step 0 reads the prompt and gives the first new token's logits: its time is "prefill".
// "first" and "last" are the mean times of the `window` steps after it and of the last
// `window` steps: per-token cost early and late in the sequence. total_s covers every step,
// prefill included; tokens_per_s = B * new / total_s (new tokens, all rows).
//
// A decoding path is a gpt::Step factory (gpt.h): `paths` in main() lists them, and one
// time_path() times each. The cached path's prefill is a forward of the prompt's length, as
// the recompute path's step 0 is: their prefill_ms compare the two.
#include <heed/heed.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../../examples/common/gpt.h"

using namespace heed;

namespace {

struct Sizes {
  int64_t prompt = 512, fresh = 512, batch = 1, window = 64;
  int64_t vocab = 65, block = 1024, layers = 6, heads = 6, width = 384;
};

// Token j of row b of the whole scripted sequence (prompt, then the new tokens): the LCG
// x <- x * 6364136223846793005 + 1442695040888963407 (mod 2^64) started at b + 1, (x >> 33) mod V.
std::vector<int64_t> script_row(int64_t b, int64_t length, int64_t V) {
  uint64_t x = uint64_t(b) + 1;
  std::vector<int64_t> out(length);
  for (auto& t : out) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    t = int64_t((x >> 33) % uint64_t(V));
  }
  return out;
}

struct Timings {
  double prefill_ms = 0, first_ms = 0, last_ms = 0, total_s = 0;
};

double mean(const std::vector<double>& v, size_t from, size_t to) {
  double s = 0;
  for (size_t i = from; i < to; ++i) s += v[i];
  return s / double(to - from);
}

// Times one decoding path: step i reads the sequence so far (B, prompt + i) and gives the
// logits (B, V) of token i + 1; nn::sample picks one greedily, and the scripted token is
// appended instead, so every path and PyTorch read the same sequences.
Timings time_path(gpt::GPT& model, const gpt::Step& step, const Sizes& s) {
  NoGradGuard no_grad;
  Bf16CacheScope keep;  // "medium": each weight rounded once for the whole run, as gpt::generate
  model->eval();
  const int64_t B = s.batch, total = s.prompt + s.fresh;
  std::vector<std::vector<int64_t>> script(B);
  for (int64_t b = 0; b < B; ++b) script[b] = script_row(b, total, s.vocab);
  auto seq = [&](int64_t t) {  // (B, t): the first t scripted tokens of each row
    std::vector<int64_t> flat;
    for (const auto& r : script) flat.insert(flat.end(), r.begin(), r.begin() + t);
    return IndexTensor(flat, {B, t});
  };
  const auto greedy = nn::SamplingOptions().temperature(0);
  std::vector<double> ms(s.fresh);
  int64_t checksum = 0;  // keeps the chosen tokens alive
  for (int64_t i = 0; i < s.fresh; ++i) {
    const IndexTensor so_far = seq(s.prompt + i);
    const auto t0 = std::chrono::steady_clock::now();
    const IndexTensor next = nn::sample(step(so_far), greedy);  // (B)
    ms[i] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    checksum += next[0];
  }
  if (checksum < 0) std::printf("unreachable\n");
  Timings r;
  r.prefill_ms = ms[0];
  const size_t w = size_t(std::min(s.window, s.fresh - 1));
  r.first_ms = w ? mean(ms, 1, 1 + w) : 0;
  r.last_ms = w ? mean(ms, ms.size() - w, ms.size()) : 0;
  for (double x : ms) r.total_s += x / 1e3;
  return r;
}

std::string text_arg(int argc, char** argv, const char* name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

int64_t arg(int argc, char** argv, const char* name, int64_t fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoll(argv[i + 1]);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  Sizes s;
  s.prompt = arg(argc, argv, "--prompt", s.prompt);
  s.fresh = arg(argc, argv, "--new", s.fresh);
  s.batch = arg(argc, argv, "--batch", s.batch);
  s.window = arg(argc, argv, "--window", s.window);
  if (s.prompt < 1 || s.fresh < 2 || s.batch < 1 || s.window < 1 || s.prompt + s.fresh > s.block) {
    std::fprintf(stderr, "bench_generate: need --prompt >= 1, --new >= 2, --batch >= 1, --window >= 1 and "
                         "--prompt + --new <= %lld\n", (long long)s.block);
    return 2;
  }
  set_float32_matmul_precision(text_arg(argc, argv, "--precision", "highest"));
  manual_seed(0);
  gpt::GPT model(gpt::GPTConfig().block_size(s.block).vocab_size(s.vocab).n_layer(s.layers).n_head(s.heads)
                     .n_embd(s.width).dropout(0).pos("learned"));
  const int64_t B = s.batch;
  const std::vector<std::pair<std::string, std::function<gpt::Step(gpt::GPT&)>>> paths = {
      {"cached", [B](gpt::GPT& m) { return gpt::cached_step(*m, B); }},
      {"recompute", [](gpt::GPT& m) { return gpt::recompute_step(*m); }},
  };
  std::vector<std::string> wanted;  // --paths a,b: the paths to run, in paths' order
  std::stringstream list(text_arg(argc, argv, "--paths", "cached,recompute"));
  for (std::string name; std::getline(list, name, ',');) {
    bool known = false;
    for (const auto& p : paths) known = known || p.first == name;
    if (!known) {
      std::fprintf(stderr, "bench_generate: --paths takes cached and/or recompute, got '%s'\n", name.c_str());
      return 2;
    }
    wanted.push_back(name);
  }
  for (const auto& [name, make_step] : paths) {
    if (std::find(wanted.begin(), wanted.end(), name) == wanted.end()) continue;
    Sizes warm = s;  // warm-up: a prefill and a step fill the allocator's cache
    warm.fresh = 2;
    time_path(model, make_step(model), warm);
    const Timings t = time_path(model, make_step(model), s);  // a fresh step: nothing carried over
    std::printf("%s B %lld prefill_ms %.3f first_ms %.3f last_ms %.3f total_s %.3f tokens_per_s %.2f new %lld\n",
                name.c_str(), (long long)s.batch, t.prefill_ms, t.first_ms, t.last_ms, t.total_s,
                s.batch * s.fresh / t.total_s, (long long)s.fresh);
    std::fflush(stdout);
  }
  return 0;
}
