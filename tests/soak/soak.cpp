// soak.cpp - the long run behind `make soak` (README, "Reliability"): train the date
// translator's seq2seq model (examples/common/seq2seq.h: BiLSTM encoder, additive attention,
// LSTMCell decoder; Bahdanau et al. 2015) with a checkpoint every few seconds, kill it with
// SIGKILL at random moments, resume it from its checkpoint, and prove at the end that its
// parameters and optimizer state equal, bit for bit, those of a run that was never killed.
//
// One program, two roles:
//
//   soak train DIR [--steps N] [--limit FILE] [--ckpt-seconds X] [--sabotage]
//       The trainer. Resumes from DIR/ckpt.bin if there is one (removing the temporary files
//       of a save that was killed), trains to step N (default: forever), saves DIR/ckpt.bin
//       after the first step that ends X seconds after the last save, and at the end.
//       (Saving by the clock, not every K steps, keeps a loaded machine from being killed
//       before every save; where the saves fall cannot change the bits, since a save changes
//       nothing and the batch of a step depends on the step alone.) With --limit it never
//       trains past the step written in FILE ("S", or "S end" to stop there): the reference
//       uses it to follow the victim.
//       --sabotage feeds a resumed run the wrong batch once, a resume bug the driver must catch.
//
//   soak run [--seconds S] [--minutes M] [--mean-kill S] [--ckpt-seconds X] [--dir D]
//            [--min-kills N] [--seed N] [--sabotage]
//       The driver. Starts two trainers (fork + exec of this program, one thread each): the
//       reference, never interrupted, and the victim. For S seconds it kills the victim with
//       SIGKILL after random waits (uniform on [0.1, 2 x mean-kill] s), and after each kill
//       loads the victim's checkpoint into a fresh model and optimizer (it must load: the
//       save is atomic), counts temporary files a killed save left, lets the reference
//       train up to the checkpoint's step, and restarts the victim. Then both finish at the
//       same step F and the driver compares them. It samples both trainers' resident memory
//       (VmRSS) every 100 ms and prints a line about 30 times over the run.
//
// Exit status of `run`: 0 when the final checkpoints are identical byte for byte (parameters,
// Adam's moments, step count), every checkpoint loaded after every kill, no temporary file
// is left and at least --min-kills kills landed; 3 when the two runs differ; 1 otherwise.
#include <heed/heed.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../../examples/common/seq2seq.h"

namespace fs = std::filesystem;
using heed::Tensor;
namespace F = heed::nn::functional;
namespace optim = heed::optim;

namespace {

constexpr uint64_t kDataSeed = 7;
constexpr int64_t kBatch = 16;
constexpr double kLr = 3e-3;

// ------------------------------------------------------------------ the trainer

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The model and optimizer both roles build: fixed initial weights (manual_seed before
// construction), so a fresh start of either process begins from the same bits.
struct Run {
  Run() {
    heed::manual_seed(1);
    model = seq2seq::Seq2Seq(seq2seq::ModelOptions().embed(16).hidden(32).attn_dim(32));
    opt = std::make_shared<optim::Adam>(model->parameters(), optim::AdamOptions(kLr));
  }
  seq2seq::Seq2Seq model{nullptr};
  std::shared_ptr<optim::Adam> opt;
};

// The batch of update number `step`: a function of the step alone, so a resumed run sees
// exactly the batches the unbroken run saw.
seq2seq::Batch batch_at(const dates::Splits& data, int64_t step) {
  std::mt19937_64 rng(kDataSeed * 1000003 + uint64_t(step));
  std::vector<int64_t> rows(kBatch);
  for (int64_t& r : rows) r = int64_t(rng() % data.train.size());
  return seq2seq::make_batch(data.train, rows);
}

// One update: warmup + cosine lr, cross-entropy over the target tokens, clipped Adam step.
double train_step(Run& run, const optim::LinearWarmupCosine& schedule, const seq2seq::Batch& b) {
  std::mt19937_64 unused;  // teacher forcing 1 draws nothing
  schedule.apply(*run.opt, run.opt->step_count());
  Tensor logits = run.model->forward(b, 1.0, unused);  // (B, T, V)
  Tensor loss = F::cross_entropy(logits.reshape({-1, dates::kTargetVocab}), b.tgt.reshape({b.tgt.numel()}),
                                 heed::nn::CrossEntropyOptions().ignore_index(dates::kPad));
  run.opt->zero_grad();
  loss.backward();
  optim::clip_grad_norm_(run.model->parameters(), 1.0);
  run.opt->step();
  return loss.item();
}

std::vector<fs::path> temp_files(const fs::path& dir) {  // "ckpt.bin.tmp.<pid>.<n>" of killed saves
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("ckpt.bin.tmp.", 0) == 0) out.push_back(e.path());
  return out;
}

struct Limit {
  int64_t step = 0;
  bool end = false;
};

Limit read_limit(const std::string& path) {
  Limit l;
  std::ifstream in(path);
  std::string word;
  in >> l.step >> word;
  l.end = word == "end";
  return l;
}

void write_limit(const fs::path& path, Limit l) {  // atomically: the reader polls it
  heed::write_file_atomically("soak", path.string(), std::to_string(l.step) + (l.end ? " end" : "") + "\n");
}

int train_main(const fs::path& dir, int64_t steps, const std::string& limit_file, double every, bool sabotage) {
  heed::set_num_threads(1);
  heed::set_dynamic_threads(false);
  for (const fs::path& t : temp_files(dir)) fs::remove(t);
  const dates::Splits data = dates::make_splits(kDataSeed, 4000, 0, 0);
  Run run;
  const optim::LinearWarmupCosine schedule(*run.opt, optim::WarmupDecayOptions(200, 20000).min_lr(kLr / 20));
  const std::string ckpt = (dir / "ckpt.bin").string();
  const bool resumed = fs::exists(ckpt);
  if (resumed) heed::load_checkpoint(ckpt, *run.model, *run.opt);
  int64_t s = run.opt->step_count(), offset = resumed && sabotage ? 1 : 0;
  Limit limit = limit_file.empty() ? Limit{steps, true} : read_limit(limit_file);
  std::ofstream log(dir / "loss.txt", std::ios::app);
  double last_save = now_s();
  while (s < steps) {
    if (s >= limit.step) {
      if (limit.end) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      limit = read_limit(limit_file);
      continue;
    }
    const double loss = train_step(run, schedule, batch_at(data, s + offset));
    offset = 0;
    ++s;
    if (s % 500 == 0) log << "step " << s << " loss " << loss << std::endl;
    if (now_s() - last_save >= every) {
      heed::save_checkpoint(ckpt, *run.model, *run.opt);
      last_save = now_s();
    }
  }
  heed::save_checkpoint(ckpt, *run.model, *run.opt);
  return 0;
}

// ------------------------------------------------------------------ the driver

pid_t spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    execv("/proc/self/exe", argv.data());
    std::perror("soak: exec");
    _exit(127);
  }
  return pid;
}

double rss_mib(pid_t pid) {  // VmRSS of a child, 0 if it is gone
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024;
  return 0;
}

struct RssTrack {
  double min = std::numeric_limits<double>::infinity(), max = 0, first = 0;
  void add(double mib) {
    if (mib <= 0) return;
    if (first == 0) first = mib;
    min = std::min(min, mib);
    max = std::max(max, mib);
  }
};

struct Options {
  double seconds = 30 * 60, mean_kill = 8, every = 2;  // every: seconds between saves
  int64_t min_kills = 2;
  uint64_t seed = 0;
  std::string dir = "build/soak/run";
  bool sabotage = false;
};

// A child that exits on its own during the kill phase has failed (the victim never stops).
bool exited(pid_t pid, const char* who) {
  int status;
  if (waitpid(pid, &status, WNOHANG) != pid) return false;
  std::fprintf(stderr, "soak: the %s exited on its own (status %d)\n", who, status);
  return true;
}

int run_main(const Options& o) {
  const fs::path root = fs::absolute(o.dir), vdir = root / "victim", rdir = root / "ref", limit = root / "limit";
  fs::remove_all(root);
  fs::create_directories(vdir);
  fs::create_directories(rdir);
  setenv("OMP_NUM_THREADS", "1", 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  setenv("HEED_DYNAMIC_THREADS", "0", 1);
  write_limit(limit, {0, false});
  const std::string every = std::to_string(o.every);
  auto victim_args = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> a = {"soak", "train", vdir.string(), "--ckpt-seconds", every};
    if (o.sabotage) a.push_back("--sabotage");
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const pid_t ref = spawn({"soak", "train", rdir.string(), "--limit", limit.string(), "--ckpt-seconds", every});
  pid_t victim = spawn(victim_args({}));

  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> wait(0.1, 2 * o.mean_kill);
  const double start = now_s(), deadline = start + o.seconds, report_every = std::max(1.0, o.seconds / 30);
  double next_report = start + report_every;
  int64_t kills = 0, mid_save = 0, before_first = 0, at_step = 0;
  RssTrack ref_rss, victim_rss, ref_late;  // ref_late: after the first tenth of the run
  bool ok = true;
  std::printf("soak: %.0f s of kills (mean every %.1f s, seed %llu), checkpoint every %.1f s, in %s\n",
              o.seconds, o.mean_kill, (unsigned long long)o.seed, o.every, root.c_str());

  // After a kill: the checkpoint must load; the reference may follow up to its step.
  auto inspect = [&]() {
    ++kills;
    mid_save += temp_files(vdir).size();
    const fs::path ckpt = vdir / "ckpt.bin";
    if (!fs::exists(ckpt)) { ++before_first; return; }
    Run fresh;
    try {
      heed::load_checkpoint(ckpt.string(), *fresh.model, *fresh.opt);
    } catch (const heed::Error& e) {
      std::fprintf(stderr, "soak: FAIL: the checkpoint after kill %lld does not load: %s\n", (long long)kills, e.what());
      ok = false;
    }
    at_step = fresh.opt->step_count();
    write_limit(limit, {at_step, false});
  };

  bool last = false;
  while (ok && !last) {
    const double kill_at = std::min(now_s() + wait(rng), deadline);
    while (now_s() < kill_at) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const double r = rss_mib(ref), v = rss_mib(victim), t = now_s();
      ref_rss.add(r);
      victim_rss.add(v);
      if (t > start + o.seconds / 10) ref_late.add(r);
      if (exited(ref, "reference") || exited(victim, "victim")) return 1;
      if (t >= next_report) {
        next_report += report_every;
        std::printf("soak: %6.1f min  kills %lld (%lld mid-save)  victim checkpoint at step %lld  rss ref %.1f victim %.1f MiB\n",
                    (t - start) / 60, (long long)kills, (long long)mid_save, (long long)at_step, r, v);
        std::fflush(stdout);
      }
    }
    last = now_s() >= deadline;
    kill(victim, SIGKILL);
    waitpid(victim, nullptr, 0);
    inspect();
    if (!last && ok) victim = spawn(victim_args({}));
  }
  if (!ok) {
    kill(ref, SIGKILL);
    waitpid(ref, nullptr, 0);
    return 1;
  }

  // Both finish at step F: the victim resumes once more, the reference catches up.
  const int64_t final_step = at_step + 50;
  write_limit(limit, {final_step, true});
  victim = spawn(victim_args({"--steps", std::to_string(final_step)}));
  int vs = 0, rs = 0;
  waitpid(victim, &vs, 0);
  waitpid(ref, &rs, 0);
  if (!WIFEXITED(vs) || WEXITSTATUS(vs) != 0 || !WIFEXITED(rs) || WEXITSTATUS(rs) != 0) {
    std::fprintf(stderr, "soak: FAIL: a trainer failed at the end (victim %d, reference %d)\n", vs, rs);
    return 1;
  }

  auto bytes = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
  };
  const std::vector<char> a = bytes(vdir / "ckpt.bin"), b = bytes(rdir / "ckpt.bin");
  Run va, rb;
  heed::load_checkpoint((vdir / "ckpt.bin").string(), *va.model, *va.opt);
  heed::load_checkpoint((rdir / "ckpt.bin").string(), *rb.model, *rb.opt);
  int64_t n = 0, differ = 0;
  const auto pv = va.model->parameters(), pr = rb.model->parameters();
  for (size_t i = 0; i < pv.size(); ++i)
    for (int64_t j = 0; j < pv[i].numel(); ++j, ++n)
      differ += std::memcmp(pv[i].data() + j, pr[i].data() + j, sizeof(heed::real)) != 0;
  const size_t left = temp_files(vdir).size() + temp_files(rdir).size();
  const int64_t landed = kills - before_first;

  std::printf("soak: %.1f min, %lld steps, %lld SIGKILLs (%lld before the first checkpoint, %lld during a save)\n",
              (now_s() - start) / 60, (long long)final_step, (long long)kills, (long long)before_first,
              (long long)mid_save);
  std::printf("soak: every checkpoint loaded after every kill; temporary files left at the end: %zu\n", left);
  std::printf("soak: resident memory, reference (never killed): first %.1f, min %.1f, max %.1f MiB"
              " (after the first tenth: %.1f..%.1f); victim max %.1f MiB\n",
              ref_rss.first, ref_rss.min, ref_rss.max, ref_late.min, ref_late.max, victim_rss.max);
  std::printf("soak: final parameters: %lld of %lld elements differ; checkpoint files %s (%zu and %zu bytes)\n",
              (long long)differ, (long long)n, a == b ? "identical" : "DIFFER", a.size(), b.size());
  if (a != b || differ) return 3;
  if (left || landed < o.min_kills) {
    std::fprintf(stderr, "soak: FAIL: %zu temporary files left, %lld kills after a checkpoint (need %lld)\n",
                 left, (long long)landed, (long long)o.min_kills);
    return 1;
  }
  std::printf("soak: PASS\n");
  return 0;
}

int usage() {
  std::fprintf(stderr,
               "usage: soak run [--seconds S] [--minutes M] [--mean-kill S] [--ckpt-seconds X] [--dir D]\n"
               "                [--min-kills N] [--seed N] [--sabotage]\n"
               "       soak train DIR [--steps N] [--limit FILE] [--ckpt-seconds X] [--sabotage]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string mode = argv[1];
  Options o;
  o.seed = uint64_t(std::chrono::system_clock::now().time_since_epoch().count());
  int64_t steps = std::numeric_limits<int64_t>::max();
  std::string limit, dir;
  try {
    for (int i = 2; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--seconds") o.seconds = std::stod(value());
      else if (a == "--minutes") o.seconds = 60 * std::stod(value());
      else if (a == "--mean-kill") o.mean_kill = std::stod(value());
      else if (a == "--ckpt-seconds") o.every = std::stod(value());
      else if (a == "--min-kills") o.min_kills = std::stoll(value());
      else if (a == "--seed") o.seed = std::stoull(value());
      else if (a == "--dir") o.dir = value();
      else if (a == "--steps") steps = std::stoll(value());
      else if (a == "--limit") limit = value();
      else if (a == "--sabotage") o.sabotage = true;
      else if (mode == "train" && dir.empty() && a[0] != '-') dir = a;
      else throw std::invalid_argument("unknown argument " + a);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soak: %s\n", e.what());
    return usage();
  }
  if (o.every <= 0 || o.seconds <= 0 || o.mean_kill <= 0) return usage();
  try {
    if (mode == "train" && !dir.empty()) return train_main(dir, steps, limit, o.every, o.sabotage);
    if (mode == "run") return run_main(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soak %s: %s\n", mode.c_str(), e.what());
    return 1;
  }
  return usage();
}
