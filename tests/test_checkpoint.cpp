// test_checkpoint.cpp - checkpoints (optim/checkpoint_file.h): a resumed run is bitwise the
// unbroken run; every damaged or mismatched file is refused with a heed::Error naming the
// problem and leaves the target untouched; a failed save leaves the old checkpoint intact.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <heed/core/random.h>
#include <heed/autograd/ops/linear.h>
#include <heed/autograd/ops/loss.h>
#include <heed/layers/activation.h>
#include <heed/layers/linear.h>
#include <heed/layers/loss.h>
#include <heed/layers/module.h>
#include <heed/layers/sequential.h>
#include <heed/optim/adam.h>
#include <heed/optim/checkpoint_file.h>
#include <heed/optim/clip.h>
#include <heed/optim/optimizer.h>
#include <heed/optim/schedule.h>
#include <heed/optim/sgd.h>
#include "helpers.h"
#include "tmp_files.h"

using namespace heed;
using heed::test::error_of;
using doctest::Contains;
namespace fs = std::filesystem;
namespace F = nn::functional;
using heed::test::Bytes;
using heed::test::read_bytes;
using heed::test::TmpDir;
using heed::test::write_bytes;
using OptimizerPtr = std::unique_ptr<optim::Optimizer>;

namespace {

// reseal_checkpoint (optim/checkpoint_file.h) recomputes the size field and trailing checksum,
// so a test can plant a bad length in an otherwise valid file and reach the parser's checks.
void reseal(Bytes& b) { reseal_checkpoint(b); }

// The raw bytes of a model's parameters and buffers, for bitwise comparisons.
Bytes bits(const nn::NamedTensors& tensors) {
  Bytes out;
  for (const auto& [n, t] : tensors) {
    const auto* p = reinterpret_cast<const uint8_t*>(t.data());
    out.insert(out.end(), p, p + t.numel() * sizeof(real));
  }
  return out;
}
Bytes bits(const nn::Module& m) { return bits(m.named_parameters()); }

nn::Sequential mlp(uint64_t seed) {  // (B, 4) -> (B, 2)
  manual_seed(seed);
  return nn::Sequential(nn::Sequential{
      nn::Linear(4, 8), nn::Tanh(), nn::Linear(8, 2)});
}

// One training step on the batch of step number opt.step_count(), so a resumed run sees the
// same data as the unbroken one.
void train_step(nn::SequentialImpl& model, optim::Optimizer& opt, const optim::LRSchedule* schedule) {
  manual_seed(1000 + uint64_t(opt.step_count()));
  const Tensor x = randn({6, 4}), y = randn({6, 2});
  if (schedule) schedule->apply(opt, opt.step_count());
  opt.zero_grad();
  F::mse_loss(model.forward(x), y).backward();
  optim::clip_grad_norm_(model.parameters(), 0.5);
  opt.step();
}

doctest::Contains contains(const std::string& s) { return doctest::Contains(s.c_str()); }

// Train 5 steps, save, train 6 more; a second model with another init loads the checkpoint
// and trains the same 6 steps: parameters and optimizer state must agree bit for bit.
// `make_schedule` (or none) builds the schedule of each run from its optimizer; the resumed
// run's is built after load_checkpoint, so it must read the groups' initial lr, not the lr
// the file restored.
using SchedulePtr = std::unique_ptr<optim::LRSchedule>;
using MakeSchedule = std::function<SchedulePtr(const optim::Optimizer&)>;
void check_resume(const std::function<OptimizerPtr(nn::Module&)>& make_opt, const MakeSchedule& make_schedule) {
  TmpDir tmp;
  const std::string path = tmp.file("run.ckpt");
  auto model = mlp(1);
  OptimizerPtr opt = make_opt(*model);
  const SchedulePtr schedule = make_schedule ? make_schedule(*opt) : nullptr;
  for (int i = 0; i < 5; ++i) train_step(*model, *opt, schedule.get());
  save_checkpoint(path, *model, *opt);
  const Bytes at_save = bits(*model);
  for (int i = 0; i < 6; ++i) train_step(*model, *opt, schedule.get());

  auto resumed = mlp(2);
  OptimizerPtr resumed_opt = make_opt(*resumed);
  CHECK(bits(*resumed) != at_save);
  load_checkpoint(path, *resumed, *resumed_opt);
  CHECK(bits(*resumed) == at_save);
  CHECK(resumed_opt->step_count() == 5);
  const SchedulePtr resumed_schedule = make_schedule ? make_schedule(*resumed_opt) : nullptr;
  for (int i = 0; i < 6; ++i) train_step(*resumed, *resumed_opt, resumed_schedule.get());

  CHECK(resumed_opt->step_count() == 11);
  CHECK(bits(*resumed) == bits(*model));
  CHECK(bits(resumed_opt->state()) == bits(opt->state()));
  CHECK(tmp.listing() == std::vector<std::string>{"run.ckpt"});  // no temporary left behind
}

}  // namespace

// ---------------------------------------------------------------- resuming

TEST_CASE("checkpoint: a resumed run is bitwise the unbroken run (Adam amsgrad + weight decay, warmup)") {
  const auto noam = [](const optim::Optimizer& opt) -> SchedulePtr {
    return std::make_unique<optim::TransformerWarmup>(opt, optim::TransformerWarmupOptions(8, 4).scale(0.5));
  };
  check_resume([](nn::Module& m) -> OptimizerPtr {
    return std::make_unique<optim::Adam>(m.parameters(), optim::AdamOptions().amsgrad(true).weight_decay(1e-2));
  }, noam);
}

TEST_CASE("checkpoint: a resumed run is bitwise the unbroken run (AdamW, two groups, warmup + cosine)") {
  const auto cosine = [](const optim::Optimizer& opt) -> SchedulePtr {
    return std::make_unique<optim::LinearWarmupCosine>(opt, optim::LinearWarmupCosineOptions(3, 9).min_lr(0.005));
  };
  check_resume([](nn::Module& m) -> OptimizerPtr {
    std::vector<Tensor> weights, biases;
    for (const auto& [n, t] : m.named_parameters())
      (n.find("weight") != std::string::npos ? weights : biases).push_back(t);
    return std::make_unique<optim::AdamW>(
        std::vector<optim::ParamGroup>{optim::ParamGroup(weights),
                                       optim::ParamGroup(biases, optim::AdamWOptions(0.01).weight_decay(0))},
        optim::AdamWOptions(0.05));
  }, cosine);
}

// No schedule: the lr set by hand after construction must come back from the file.
TEST_CASE("checkpoint: a resumed run is bitwise the unbroken run (SGD Nesterov momentum, hand-set lr)") {
  check_resume([](nn::Module& m) -> OptimizerPtr {
    return std::make_unique<optim::SGD>(m.parameters(), optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
  }, nullptr);

  TmpDir tmp;
  auto model = mlp(1);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  opt.param_groups()[0].set_lr(0.0375);
  save_checkpoint(tmp.file("c"), *model, opt);
  optim::SGD fresh(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  load_checkpoint(tmp.file("c"), *model, fresh);
  CHECK(fresh.param_groups()[0].lr() == 0.0375);
}

TEST_CASE("checkpoint: model-only save and load; buffers; saving replaces the previous file") {
  struct Scaled : nn::Module {  // a parameter and a buffer
    Scaled() {
      w = register_parameter("w", randn({3}));
      scale = register_buffer("scale", randn({2, 2}));
    }
    std::string repr() const override { return "Scaled"; }
    Tensor w, scale;
  };
  TmpDir tmp;
  const std::string path = tmp.file("m.ckpt");
  manual_seed(3);
  Scaled a;
  save_checkpoint(path, a);
  manual_seed(4);
  Scaled b;
  load_checkpoint(path, b);
  CHECK(bits(b.named_buffers()) == bits(a.named_buffers()));
  CHECK(bits(b) == bits(a));

  // The model part of a full checkpoint loads alone; a model-only file has no optimizer.
  auto model = mlp(1), other = mlp(2);
  optim::Adam adam(model->parameters());
  save_checkpoint(path, *model, adam);
  load_checkpoint(path, *other);
  CHECK(bits(*other) == bits(*model));
  save_checkpoint(path, *mlp(5));
  const Bytes before = bits(*other);
  optim::Adam other_adam(other->parameters());
  CHECK_THROWS_WITH_AS(load_checkpoint(path, *other, other_adam), Contains("holds no optimizer state"), Error);
  CHECK(bits(*other) == before);
  load_checkpoint(path, *other);  // the second save replaced the first
  CHECK(bits(*other) == bits(*mlp(5)));
}

// ---------------------------------------------------------------- damaged files

TEST_CASE("checkpoint: every truncation is refused as truncated, and changes nothing") {
  TmpDir tmp;
  auto model = mlp(1);
  optim::Adam adam(model->parameters(), optim::AdamOptions().amsgrad(true));
  train_step(*model, adam, nullptr);
  save_checkpoint(tmp.file("good"), *model, adam);
  const Bytes good = read_bytes(tmp.file("good"));
  REQUIRE(good.size() > 100);

  auto target = mlp(2);
  optim::Adam target_adam(target->parameters(), optim::AdamOptions().amsgrad(true));
  const Bytes before = bits(*target);
  const std::string cut = tmp.file("cut");
  std::vector<size_t> not_refused;  // lengths 0 .. size-1: inside the header, a name, data, the checksum
  for (size_t n = 0; n < good.size(); ++n) {
    write_bytes(cut, good, n);
    const std::string msg = error_of([&] { load_checkpoint(cut, *target, target_adam); });
    if (msg.find("truncated") == std::string::npos || msg.find(cut) == std::string::npos) not_refused.push_back(n);
  }
  CHECK(not_refused.empty());
  CHECK(bits(*target) == before);
  CHECK(target_adam.step_count() == 0);
  CHECK(bits(target_adam.state()) == Bytes(before.size() * 3, 0));  // still all zeros
}

TEST_CASE("checkpoint: every flipped byte is refused, by the check that owns it") {
  TmpDir tmp;
  auto model = mlp(1);
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  save_checkpoint(tmp.file("good"), *model, sgd);
  const Bytes good = read_bytes(tmp.file("good"));
  auto target = mlp(2);
  const Bytes before = bits(*target);
  const std::string bad = tmp.file("bad");
  for (size_t i = 0; i < good.size(); ++i) {
    Bytes b = good;
    b[i] ^= 0x10;
    write_bytes(bad, b, b.size());
    const std::string msg = error_of([&] { load_checkpoint(bad, *target); });
    const char* expected = i < 8 ? "wrong magic" : i < 12 ? "unsupported format version"
                         : i < 16 ? "dtype mismatch" : i < 24 ? "bytes" : "checksum mismatch";
    INFO("byte ", i, ": ", msg);
    CHECK(msg.find(expected) != std::string::npos);
  }
  CHECK(bits(*target) == before);
}

TEST_CASE("checkpoint: missing file, wrong magic, version and dtype name the problem and the path") {
  TmpDir tmp;
  auto model = mlp(1);
  const std::string path = tmp.file("c.ckpt");
  CHECK_THROWS_WITH_AS(load_checkpoint(path, *model),
                       contains("load_checkpoint: '" + path + "': cannot open it: No such file or directory"),
                       Error);
  save_checkpoint(path, *model);
  const Bytes good = read_bytes(path);

  Bytes b = good;
  std::memcpy(b.data(), "NOTACKPT", 8);
  write_bytes(path, b, b.size());
  CHECK_THROWS_WITH_AS(load_checkpoint(path, *model),
                       contains("'" + path + "': not a heed checkpoint (wrong magic"), Error);
  write_bytes(path, Bytes{'h', 'i', '\n'}, 3);
  CHECK_THROWS_WITH_AS(load_checkpoint(path, *model), Contains("wrong magic"), Error);

  b = good;
  b[8] = 2;
  reseal(b);
  write_bytes(path, b, b.size());
  CHECK_THROWS_WITH_AS(load_checkpoint(path, *model),
                       Contains("unsupported format version 2 (this build reads version 1)"), Error);

  b = good;
  b[12] = 8;  // as the double build writes it
  reseal(b);
  write_bytes(path, b, b.size());
  CHECK_THROWS_WITH_AS(load_checkpoint(path, *model),
                       Contains("dtype mismatch: saved with 8-byte elements, "
                                "but this build of heed uses 4-byte float"),
                       Error);

  b = good;
  b.push_back(0);
  write_bytes(path, b, b.size());
  CHECK_THROWS_WITH_AS(load_checkpoint(path, *model), Contains("declares"), Error);
}

// With a valid checksum, the parser's own bounds checks must still hold: no allocation or
// read is sized by a field it has not checked against the bytes that remain.
TEST_CASE("checkpoint: lengths planted behind a valid checksum are bounds-checked") {
  TmpDir tmp;
  auto model = mlp(1);
  const std::string path = tmp.file("c.ckpt");
  save_checkpoint(path, *model);
  const Bytes good = read_bytes(path);
  // Layout of the first record: count at 24, name length at 32, "0.weight" at 36, rank at 44, dims at 48.
  REQUIRE(std::string(good.begin() + 36, good.begin() + 44) == "0.weight");
  auto planted = [&](size_t at, uint64_t v, int bytes) {
    Bytes b = good;
    for (int i = 0; i < bytes; ++i) b[at + i] = uint8_t(v >> (8 * i));
    reseal(b);
    write_bytes(path, b, b.size());
    return error_of([&] { load_checkpoint(path, *model); });
  };
  const Bytes before = bits(*model);
  CHECK(planted(24, uint64_t(1) << 60, 8).find("model tensor count 1152921504606846976") != std::string::npos);
  CHECK(planted(32, 0xfffffff0u, 4).find("corrupt: a tensor name at byte 36 needs 4294967280 bytes") !=
        std::string::npos);
  CHECK(planted(44, 9, 4).find("tensor '0.weight' has rank 9 (at most 8)") != std::string::npos);
  CHECK(planted(48, uint64_t(1) << 62, 8).find("more data than the file holds") != std::string::npos);
  CHECK(planted(48, 9, 8).find("corrupt") != std::string::npos);  // (9,4) reads past the end
  CHECK(bits(*model) == before);
}

// ---------------------------------------------------------------- mismatched targets

TEST_CASE("checkpoint: a different model is refused, naming the tensor and both shapes") {
  TmpDir tmp;
  const std::string path = tmp.file("c.ckpt");
  auto linear = [](int64_t out, bool bias) {
    return nn::Sequential(
        nn::Sequential{nn::Linear(nn::LinearOptions(4, out).bias(bias))});
  };
  auto refused = [&](nn::Module& target, const std::string& words) {
    const Bytes before = bits(target);
    CHECK_THROWS_WITH_AS(load_checkpoint(path, target), contains(words), Error);
    CHECK(bits(target) == before);
  };
  save_checkpoint(path, *linear(3, true));
  refused(*linear(5, true), "shape mismatch for '0.weight': (3,4) in the checkpoint, (5,4) in the model");
  refused(*linear(3, false), "unexpected tensor '0.bias' (the model has no parameter or buffer of that name)");
  nn::Sequential deeper{nn::Linear(4, 3), nn::Tanh(),
                        nn::Linear(3, 2)};
  refused(*deeper, "missing tensor '2.weight' (the model has it, the checkpoint does not)");
  save_checkpoint(path, *mlp(1));
  refused(*linear(8, true), "unexpected tensor '2.weight'");
}

TEST_CASE("checkpoint: another optimizer type, group count or state is refused, and changes nothing") {
  TmpDir tmp;
  const std::string path = tmp.file("c.ckpt");
  auto model = mlp(1);
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  train_step(*model, sgd, nullptr);
  save_checkpoint(path, *model, sgd);

  auto target = mlp(2);
  const Bytes before = bits(*target);
  optim::Adam adam(target->parameters(), optim::AdamOptions(0.125));
  CHECK_THROWS_WITH_AS(load_checkpoint(path, *target, adam),
                       contains("'" + path +
                                "': optimizer type mismatch: it holds SGD state, but the optimizer is Adam"),
                       Error);
  const std::vector<Tensor> ps = target->parameters();
  optim::SGD two_groups({optim::ParamGroup({ps[0]}), optim::ParamGroup({ps[1], ps[2], ps[3]})},
                        optim::SGDOptions(0.125).momentum(0.9));
  CHECK_THROWS_WITH_AS(load_checkpoint(path, *target, two_groups),
                       Contains("it holds 1 param groups, but the SGD optimizer has 2"), Error);
  optim::SGD plain(target->parameters(), optim::SGDOptions(0.125));
  CHECK_THROWS_WITH_AS(load_checkpoint(path, *target, plain),
                       Contains("SGD.load_state: unexpected state tensor 'group0.param0.momentum_buffer'"), Error);
  CHECK(bits(*target) == before);
  for (optim::Optimizer* o : std::initializer_list<optim::Optimizer*>{&adam, &two_groups, &plain}) {
    CHECK(o->step_count() == 0);
    CHECK(o->param_groups()[0].lr() == 0.125);
  }
}

// ---------------------------------------------------------------- atomic saves

TEST_CASE("checkpoint: a save that cannot be written is an Error naming the path, and leaves no temporary") {
  TmpDir tmp;
  auto model = mlp(1);
  const std::string no_dir = tmp.file("no_such_dir") + "/c.ckpt";
  CHECK_THROWS_WITH_AS(save_checkpoint(no_dir, *model), contains("to save '" + no_dir + "': No such file"), Error);
  write_bytes(tmp.file("plain_file"), Bytes{1}, 1);
  const std::string under_file = tmp.file("plain_file") + "/c.ckpt";
  CHECK_THROWS_WITH_AS(save_checkpoint(under_file, *model), contains(under_file), Error);
  // The target is a directory: refused before anything is written (test_atomic_write.cpp).
  fs::create_directories(tmp.dir / "is_dir" / "inside");
  CHECK_THROWS_WITH_AS(save_checkpoint(tmp.file("is_dir"), *model), Contains("is a directory, not a regular file"), Error);
  CHECK(tmp.listing() == std::vector<std::string>{"is_dir", "plain_file"});
}

// A full disk, simulated with a file size limit (which binds root too): the write fails
// mid-save, and the checkpoint already on disk must be untouched and still load.
TEST_CASE("checkpoint: a save that fails mid-write leaves the previous checkpoint loadable") {
  TmpDir tmp;
  const std::string path = tmp.file("c.ckpt");
  auto good = mlp(1);
  save_checkpoint(path, *good);
  const Bytes on_disk = read_bytes(path);

  rlimit old{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
  rlimit small = old;
  small.rlim_cur = 64;
  void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);  // get EFBIG instead of the signal
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  const std::string msg = error_of([&] { save_checkpoint(path, *mlp(2)); });
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);

  CHECK(msg.find("save_checkpoint: cannot write") != std::string::npos);
  CHECK(msg.find(path) != std::string::npos);
  CHECK(tmp.listing() == std::vector<std::string>{"c.ckpt"});
  CHECK(read_bytes(path) == on_disk);
  auto loaded = mlp(3);
  load_checkpoint(path, *loaded);
  CHECK(bits(*loaded) == bits(*good));
}
