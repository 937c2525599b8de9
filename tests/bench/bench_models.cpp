// bench_models.cpp - whole-model training steps, the workloads users actually run; the
// PyTorch twin is bench_models_torch.py, which also drives both and prints the table.
//
//   build/bench/bench_models CASE
//       one case: "CASE <ms> ms <GFLOP> gflop <MiB> peak_mib <MiB> rss_mib"
//   build/bench/bench_models --list      the case names
//   build/bench/bench_models --busy CASE ...
//       starts a busy-loop process (one core taken), then times each case at heed's default
//       thread settings and with one thread (heed::set_num_threads(1)), alternating, and
//       prints "CASE default <ms> one <ms> ratio <x>"; the busy loop is killed at the end.
//   build/bench/bench_models --anomaly CASE ...
//       times each case with anomaly mode off and on (DetectAnomalyGuard: every forward
//       output checked for NaN, every gradient for NaN and Inf), alternating, 5 rounds, and
//       prints "CASE off <ms> on <ms> ratio <x>" (medians of the rounds).
//   build/bench/bench_models --precision P CASE
//       one case under heed::set_float32_matmul_precision(P) (highest, high or medium), as
//       above (bench_models_torch.py --bf16 prints the table of heed "highest" and "medium"
//       against PyTorch fp32 and bf16 autocast)
//   build/bench/bench_models --steps N CASE
//       warm-up, then N steps in a row for a profiler (perf record -g ...): prints the mean
//       ms per step and the minor page faults per step (0 once the allocator's cache is warm).
//
// <ms> is the median of a few timed steps after warm-up. <GFLOP> is the matmul work of one
// step (forward flops x 3 for forward + backward; see each case), <MiB> the allocator's peak
// live bytes during one step beyond what was live before it (alloc::PeakScope), rss_mib the
// growth of the peak resident set (VmHWM) from just before the first step.
#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/heed.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace heed;
namespace F = heed::nn::functional;

namespace {

struct Case {
  std::function<void()> step;  // one training step (or fwd + bwd)
  double gflop;                // matmul work of one step
  int reps;                    // timed steps
  int warmup = 2;              // untimed steps first (fill the allocator's cache)
};

IndexTensor random_ids(int64_t n, int64_t vocab, const Shape& shape) {
  std::vector<int64_t> ids(n);
  for (auto& i : ids) i = int64_t(rand_uniform() * vocab) % vocab;
  return IndexTensor(ids, shape);
}

// A GPT: token + position embeddings, pre-norm causal transformer blocks, a final norm and a
// linear head; AdamW. Forward flops per step: layers * (24 n E^2 + 4 B T^2 E) + 2 n E V
// (n = B T tokens, F = 4E); x 3 for forward + backward.
struct GPT : nn::Module {
  GPT(int64_t V, int64_t T, int64_t L, int64_t H, int64_t E) {
    tok = register_module("tok", nn::Embedding(nn::EmbeddingOptions(V, E)));
    pos = register_module("pos", nn::Embedding(nn::EmbeddingOptions(T, E)));
    blocks = register_module("blocks", nn::TransformerEncoder(
        nn::TransformerEncoderOptions(nn::TransformerEncoderLayerOptions(E, H)
                                          .dim_feedforward(4 * E).dropout(0)
                                          .activation("gelu").norm_first(true), L).norm(true)));
    head = register_module("head", nn::Linear(nn::LinearOptions(E, V)));
  }
  Tensor forward(const IndexTensor& idx, const IndexTensor& positions) {  // (B, T) -> (B, T, V)
    Tensor x = tok->forward(idx) + pos->forward(positions);                // (B, T, E)
    return head->forward(blocks->forward(x, nn::AttentionMask().causal()));
  }
  nn::Embedding tok{nullptr}, pos{nullptr};
  nn::TransformerEncoder blocks{nullptr};
  nn::Linear head{nullptr};
  std::string repr() const override { return "GPT"; }
};

Case gpt_case(int64_t V, int64_t T, int64_t B, int64_t L, int64_t H, int64_t E, int reps) {
  auto model = std::make_shared<GPT>(V, T, L, H, E);
  auto opt = std::make_shared<optim::AdamW>(model->parameters(), optim::AdamWOptions(3e-4));
  const IndexTensor x = random_ids(B * T, V, {B, T}), y = random_ids(B * T, V, {B * T});
  std::vector<int64_t> p(T);
  for (int64_t t = 0; t < T; ++t) p[t] = t;
  const IndexTensor positions(p, {T});
  const double n = double(B * T);
  const double gflop = 3 * (L * (24 * n * E * E + 4.0 * B * T * T * E) + 2 * n * E * V) / 1e9;
  return {[=] {
            Tensor logits = model->forward(x, positions);  // (B, T, V)
            Tensor loss = F::cross_entropy(logits.reshape({B * T, V}), y);
            opt->zero_grad();
            loss.backward();
            opt->step();
          },
          gflop, reps};
}

// seq2seq (Bahdanau et al. 2015): a BiLSTM encoder, additive attention, an LSTMCell decoder
// fed [y_{t-1} embedding; context], teacher forcing, Adam. Vocabularies 1000, embeddings 128,
// encoder hidden 128 per direction, decoder hidden 256, attention dim 128.
struct Seq2Seq : nn::Module {
  static constexpr int64_t V = 1000, Em = 128, He = 128, Hd = 256, A = 128;
  Seq2Seq() {
    src_emb = register_module("src_emb", nn::Embedding(nn::EmbeddingOptions(V, Em)));
    tgt_emb = register_module("tgt_emb", nn::Embedding(nn::EmbeddingOptions(V, Em)));
    enc = register_module("enc", nn::LSTM(nn::LSTMOptions(Em, He).bidirectional(true)));
    attn = register_module("attn", nn::AdditiveAttention(
                                       nn::AdditiveAttentionOptions(Hd, 2 * He, A)));
    dec = register_module("dec", nn::LSTMCell(nn::LSTMCellOptions(Em + 2 * He, Hd)));
    out = register_module("out", nn::Linear(nn::LinearOptions(Hd, V)));
  }
  // src (B, S), tgt_in (B, Tt) -> logits (B * Tt, V)
  Tensor forward(const IndexTensor& src, const IndexTensor& tgt_in, int64_t B, int64_t Tt) {
    const Tensor h = enc->forward(src_emb->forward(src)).output;  // (B, S, 2He)
    const Tensor hp = attn->precompute_keys(h);                         // (B, S, A)
    const Tensor y = tgt_emb->forward(tgt_in);                          // (B, Tt, Em)
    Tensor s = zeros({B, Hd}), cell = zeros({B, Hd});
    std::vector<Tensor> states;
    for (int64_t t = 0; t < Tt; ++t) {
      const Tensor c = attn->forward_projected(s, hp, h).context;  // (B, 2He)
      const Tensor y_t = narrow(y, 1, t, 1).reshape({B, Em});
      std::tie(s, cell) = dec->forward(cat({y_t, c}, -1), std::make_tuple(s, cell));
      states.push_back(s);
    }
    return out->forward(stack(states, 1).reshape({B * Tt, Hd}));  // (B * Tt, V)
  }
  nn::Embedding src_emb{nullptr}, tgt_emb{nullptr};
  nn::LSTM enc{nullptr};
  nn::AdditiveAttention attn{nullptr};
  nn::LSTMCell dec{nullptr};
  nn::Linear out{nullptr};
  std::string repr() const override { return "Seq2Seq"; }
};

Case seq2seq_case() {
  const int64_t B = 64, S = 30, Tt = 12, V = Seq2Seq::V, Em = Seq2Seq::Em, He = Seq2Seq::He,
                Hd = Seq2Seq::Hd, A = Seq2Seq::A;
  auto model = std::make_shared<Seq2Seq>();
  auto opt = std::make_shared<optim::Adam>(model->parameters(), optim::AdamOptions(1e-3));
  const IndexTensor src = random_ids(B * S, V, {B, S}), tin = random_ids(B * Tt, V, {B, Tt});
  const IndexTensor tout = random_ids(B * Tt, V, {B * Tt});
  const double fwd = 2.0 * S * 2 * B * 4 * He * (Em + He)        // encoder, both directions
                     + 2.0 * B * S * 2 * He * A                  // W_h h
                     + Tt * (2.0 * B * Hd * A + 3.0 * B * S * A  // W_s s, tanh and v^T
                             + 2.0 * B * S * 2 * He              // context
                             + 2.0 * B * 4 * Hd * (Em + 2 * He + Hd))  // decoder cell
                     + 2.0 * B * Tt * Hd * V;                    // output projection
  return {[=] {
            Tensor loss = F::cross_entropy(model->forward(src, tin, B, Tt), tout);
            opt->zero_grad();
            loss.backward();
            opt->step();
          },
          3 * fwd / 1e9, 5};
}

// One LSTM layer, forward + backward of sum(out * w). Forward flops 2 T B 4H (In + H).
Case lstm_case() {
  const int64_t B = 32, T = 100, In = 128, H = 256;
  auto lstm = nn::LSTM(nn::LSTMOptions(In, H));
  const Tensor x = randn({B, T, In}).requires_grad_(), w = randn({B, T, H});
  return {[=] {
            for (Tensor p : lstm->parameters()) p.set_grad(Tensor());
            x.set_grad(Tensor());
            sum(lstm->forward(x).output * w).backward();
          },
          3 * 2.0 * T * B * 4 * H * (In + H) / 1e9, 5};
}

// One GRU layer, the lstm case's shapes, forward + backward of sum(out * w).
// Forward flops 2 T B 3H (In + H).
Case gru_case() {
  const int64_t B = 32, T = 100, In = 128, H = 256;
  auto gru = nn::GRU(nn::GRUOptions(In, H));
  const Tensor x = randn({B, T, In}).requires_grad_(), w = randn({B, T, H});
  return {[=] {
            for (Tensor p : gru->parameters()) p.set_grad(Tensor());
            x.set_grad(Tensor());
            sum(gru->forward(x).output * w).backward();
          },
          3 * 2.0 * T * B * 3 * H * (In + H) / 1e9, 5};
}

// Causal attention, B 1, 4 heads, head dim 64, flash kernel, forward + backward.
// Forward flops of the causal half: 2 B H T^2 D (Q K^T and P V); x 3 for fwd + bwd.
Case attention_case(int64_t T) {
  const int64_t B = 1, H = 4, D = 64;
  const Tensor q = randn({B, H, T, D}).requires_grad_(), k = randn({B, H, T, D}).requires_grad_();
  const Tensor v = randn({B, H, T, D}).requires_grad_(), dO = randn({B, H, T, D});
  return {[=] {
            for (Tensor t : {q, k, v}) t.set_grad(Tensor());
            flash_attention(q, k, v, nn::AttentionMask().causal()).backward(dO);
          },
          3 * 2.0 * B * H * T * T * D / 1e9, T >= 16384 ? 1 : T >= 4096 ? 3 : 5, T >= 16384 ? 0 : 1};
}

// 10,000 chained tiny element-wise ops on a (4) tensor and their backward; reported per op
// by the driver (the case's time / 10,000).
Case tiny_ops_case() {
  const Tensor x = randn({4}).requires_grad_();
  return {[=] {
            x.set_grad(Tensor());
            Tensor y = x;
            for (int i = 0; i < 2500; ++i) y = ((y * 0.5) + 1) * 0.9 - 0.4;  // 4 ops a turn
            sum(y).backward();
          },
          0, 5};
}

// sgemm peak: (1024 x 1024) @ (1024 x 1024), no autograd.
Case sgemm_case() {
  const Tensor a = randn({1024, 1024}), b = randn({1024, 1024});
  return {[=] { matmul(a, b); }, 2.0 * 1024 * 1024 * 1024 / 1e9, 10};
}

std::map<std::string, std::function<Case()>> cases() {
  return {
      {"sgemm_1024", sgemm_case},
      {"gpt_baby", [] { return gpt_case(65, 64, 12, 4, 4, 128, 5); }},
      {"gpt_small", [] { Case c = gpt_case(65, 256, 8, 6, 6, 384, 3); c.warmup = 1; return c; }},
      {"seq2seq", seq2seq_case},
      {"lstm", lstm_case},
      {"gru", gru_case},
      {"attn_T512", [] { return attention_case(512); }},
      {"attn_T2048", [] { return attention_case(2048); }},
      {"attn_T4096", [] { return attention_case(4096); }},
      {"attn_T16384", [] { return attention_case(16384); }},
      {"tiny_ops", tiny_ops_case},
  };
}

// VmRSS or VmHWM (the peak) of this process from /proc/self/status, in MiB.
double status_mib(const char* field) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  double kib = 0;
  while (std::fgets(line, sizeof line, f))
    if (!std::strncmp(line, field, std::strlen(field))) kib = std::atof(line + std::strlen(field));
  std::fclose(f);
  return kib / 1024;
}

double rss_before_steps = 0;  // VmRSS just before the first step of a case

double median_ms(const Case& c) {
  rss_before_steps = status_mib("VmRSS:");
  for (int i = 0; i < c.warmup; ++i) c.step();
  std::vector<double> t;
  for (int i = 0; i < c.reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    c.step();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// A child process spinning on one core until killed.
pid_t start_busy_loop() {
  const pid_t pid = fork();
  if (pid == 0) {
    volatile unsigned long n = 0;
    for (;;) n = n + 1;
  }
  return pid;
}

// Times case c in two settings, alternating rounds: set(false) then a timing, set(true)
// then a timing. Returns the two medians over the rounds.
std::pair<double, double> alternating_medians(const Case& c, int rounds, const std::function<void(bool)>& set) {
  std::vector<double> a, b;
  for (int round = 0; round < rounds; ++round) {
    set(false);
    a.push_back(median_ms(c));
    set(true);
    b.push_back(median_ms(c));
  }
  set(false);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return {a[rounds / 2], b[rounds / 2]};
}

int busy_mode(int argc, char** argv) {
  const int requested = get_num_threads();
  const pid_t busy = start_busy_loop();
  std::printf("busy loop pid %d; default = %d threads\n", int(busy), requested);
  for (int i = 2; i < argc; ++i) {
    const auto [d, one] = alternating_medians(cases().at(argv[i])(), 3,
                                              [&](bool single) { set_num_threads(single ? 1 : requested); });
    std::printf("%s default %.2f one %.2f ratio %.2f\n", argv[i], d, one, d / one);
    std::fflush(stdout);
  }
  kill(busy, SIGKILL);
  waitpid(busy, nullptr, 0);
  return 0;
}

int anomaly_mode(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    const auto [off, on] = alternating_medians(cases().at(argv[i])(), 5,
                                               [](bool on) { AnomalyMode::set_enabled(on); });
    std::printf("%s off %.2f on %.2f ratio %.3f\n", argv[i], off, on, on / off);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

int steps_mode(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: bench_models --steps N CASE\n");
    return 2;
  }
  const int n = std::atoi(argv[2]);
  const Case c = cases().at(argv[3])();
  for (int i = 0; i < c.warmup; ++i) c.step();
  const long faults = minor_faults();
  const auto a = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) c.step();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
  std::printf("%s %d steps %.3f ms/step %.1f minor_faults/step\n", argv[3], n, ms / n,
              double(minor_faults() - faults) / n);
  return 0;
}

int main(int argc, char** argv) {
  manual_seed(0);
  if (argc > 3 && !std::strcmp(argv[1], "--precision")) {
    try {
      set_float32_matmul_precision(argv[2]);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 2;
    }
    argv[2] = argv[0];
    argv += 2;
    argc -= 2;
  }
  if (argc > 1 && !std::strcmp(argv[1], "--steps")) return steps_mode(argc, argv);
  if (argc < 2 || !std::strcmp(argv[1], "--list")) {
    for (const auto& [name, make] : cases()) std::printf("%s\n", name.c_str());
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--busy")) return busy_mode(argc, argv);
  if (!std::strcmp(argv[1], "--anomaly")) return anomaly_mode(argc, argv);
  const auto all = cases();
  const auto it = all.find(argv[1]);
  if (it == all.end()) {
    std::fprintf(stderr, "unknown case %s (--list shows them)\n", argv[1]);
    return 2;
  }
  const Case c = it->second();
  const double ms = median_ms(c);
  double mib;
  {
    alloc::PeakScope scope;
    c.step();
    mib = double(scope.bytes()) / (1 << 20);
  }
  const double rss = status_mib("VmHWM:") - rss_before_steps;
  std::printf("%s %.3f ms %.4f gflop %.1f peak_mib %.1f rss_mib\n", argv[1], ms, c.gflop, mib, rss);
  return 0;
}
