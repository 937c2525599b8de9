// test_data_parallel.cpp - run by `make test-mpi` on 2 ranks: data parallel training with
// optim/distributed_mpi.h equals one process training on the combined batch.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include <heed/heed.h>
#include <heed/optim/distributed_mpi.h>

#include "../tmp_files.h"

using namespace heed;

namespace {

// x (N, 4) -> Linear -> tanh -> Linear -> (N, 3); deterministic (no dropout).
struct Mlp : nn::Module {
  nn::Linear fc1 = register_module("fc1", nn::Linear(4, 8));
  nn::Linear fc2 = register_module("fc2", nn::Linear(8, 3));
  Tensor forward(const Tensor& x) { return fc2->forward(tanh(fc1->forward(x))); }
};

void copy_parameters(const nn::Module& from, nn::Module& to) {
  std::vector<Tensor> a = from.parameters(), b = to.parameters();
  NoGradGuard ng;
  for (size_t i = 0; i < a.size(); ++i) std::copy(a[i].data(), a[i].data() + a[i].numel(), b[i].data());
}

// max over elements of |a - b| / max(|b|, 1e-3): "equal to 1e-5 relative".
double max_rel_diff(const nn::Module& m, const nn::Module& ref) {
  std::vector<Tensor> a = m.parameters(), b = ref.parameters();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t j = 0; j < a[i].numel(); ++j)
      worst = std::max(worst, std::abs(double(a[i].data()[j]) - b[i].data()[j]) /
                                  std::max(std::abs(double(b[i].data()[j])), 1e-3));
  return worst;
}

// 20 steps of Adam with per-rank batch b on rank r's rows of each combined batch of W*b,
// and the same 20 steps in this one process on the combined batches.
void check_matches_single_process(const dist::GradientAveragerOptions& options, int* buckets) {
  const int W = dist::world_size(), r = dist::rank();
  const int64_t b = 5, steps = 20;
  manual_seed(100 + r);  // each rank starts from different weights: the broadcast must fix it
  auto model = std::make_shared<Mlp>();
  dist::broadcast_parameters(*model);
  auto ref = std::make_shared<Mlp>();
  copy_parameters(*model, *ref);

  manual_seed(7);  // the same data on every rank
  Tensor xs = randn({steps, W * b, 4});  // (S, W*b, 4)
  Tensor ys = randn({steps, W * b, 3});  // (S, W*b, 3)

  optim::Adam opt(model->parameters(), optim::AdamOptions(1e-2));
  optim::Adam opt_ref(ref->parameters(), optim::AdamOptions(1e-2));
  dist::GradientAverager sync(*model, options);
  *buckets = sync.num_buckets();
  for (int64_t s = 0; s < steps; ++s) {
    Tensor x = xs.select(0, s), y = ys.select(0, s);  // (W*b, 4), (W*b, 3)
    opt.zero_grad();
    nn::functional::mse_loss(model->forward(x.narrow(0, r * b, b)), y.narrow(0, r * b, b)).backward();
    sync.synchronize();
    opt.step();

    opt_ref.zero_grad();
    nn::functional::mse_loss(ref->forward(x), y).backward();
    opt_ref.step();
  }
  CHECK(max_rel_diff(*model, *ref) <= 1e-5);
  CHECK(max_rel_diff(*model, *ref) > 0);  // float rounding differs: the test compares, not copies
  dist::check_same_state_on_all_ranks(*model, opt);  // throws if the ranks diverged
}

// One temporary file path for all ranks (same machine): rank 0 makes the directory, which
// `tmp` removes, and sends the path to the others.
std::string shared_tmp_file(std::unique_ptr<heed::test::TmpDir>& tmp, const std::string& name) {
  char path[512] = {0};
  if (dist::rank() == 0) {
    tmp = std::make_unique<heed::test::TmpDir>();
    std::snprintf(path, sizeof path, "%s", tmp->file(name).c_str());
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  return path;
}

}  // namespace

TEST_CASE("the test runs on 2 ranks") {
  REQUIRE(dist::world_size() == 2);
}

TEST_CASE("data parallel Adam on per-rank batch b equals one process on batch 2b, 20 steps") {
  int buckets = 0;
  SUBCASE("overlapped, default 25 MiB bucket") {
    check_matches_single_process(dist::GradientAveragerOptions(), &buckets);
    CHECK(buckets == 1);
  }
  SUBCASE("overlapped, 64-byte buckets (one per tensor)") {
    check_matches_single_process(dist::GradientAveragerOptions().bucket_bytes(64), &buckets);
    CHECK(buckets == 4);  // fc2.bias, fc2.weight, fc1.bias, fc1.weight
  }
  SUBCASE("not overlapped, 128-byte buckets (32 floats)") {
    check_matches_single_process(dist::GradientAveragerOptions().bucket_bytes(128).overlap(false),
                                 &buckets);
    CHECK(buckets == 3);  // {fc2.bias 3 + fc2.weight 24}, {fc1.bias 8}, {fc1.weight 32}
  }
}

TEST_CASE("broadcast_parameters copies rank 0's parameters and buffers") {
  manual_seed(1 + dist::rank());
  nn::Linear fc(3, 2);
  Tensor w0 = fc->parameters()[0].clone();
  dist::broadcast_parameters(*fc);
  Tensor w = fc->parameters()[0];
  dist::allreduce_mean_(w0);  // the mean of the ranks' original weights
  bool changed = false;
  for (int64_t i = 0; i < w.numel(); ++i) changed = changed || w.data()[i] != w0.data()[i];
  CHECK(changed);
  Tensor sum_w = w.clone();
  dist::allreduce_mean_(sum_w);  // equal on every rank: the mean is each one
  for (int64_t i = 0; i < w.numel(); ++i) CHECK(sum_w.data()[i] == doctest::Approx(w.data()[i]));
}

TEST_CASE("a parameter used on one rank only gets half that rank's gradient on both") {
  Tensor a = ones({2}).requires_grad_();
  Tensor c = ones({2}).requires_grad_();
  struct Two : nn::Module {
    Tensor a, c;
    Two(Tensor a_, Tensor c_) { a = register_parameter("a", a_); c = register_parameter("c", c_); }
  } two(a, c);
  dist::GradientAverager sync(two);
  Tensor loss = dist::rank() == 0 ? sum(two.a * 3.0) + sum(two.c) : sum(two.a * 5.0);
  loss.backward();
  sync.synchronize();
  CHECK(two.a.grad().to_vector() == std::vector<real>{4, 4});      // (3 + 5) / 2
  CHECK(two.c.grad().to_vector() == std::vector<real>{0.5, 0.5});  // (1 + 0) / 2
}

TEST_CASE("a second backward before synchronize() is an error; set_enabled(false) accumulates") {
  nn::Linear fc(2, 1);
  dist::GradientAverager sync(*fc);
  Tensor x = ones({1, 2});
  sum(fc->forward(x)).backward();
  std::string msg;
  try {
    sum(fc->forward(x)).backward();
  } catch (const Error& e) {
    msg = e.what();
  }
  CHECK(msg.find("GradientAverager: a parameter of shape") == 0);
  CHECK(msg.find("before synchronize()") != std::string::npos);
  sync.synchronize();  // completes the first step's buckets on both ranks

  fc->zero_grad();
  sync.set_enabled(false);
  sum(fc->forward(x)).backward();  // micro-batch 1: local only
  sync.set_enabled(true);
  sum(fc->forward(x * (1.0 + dist::rank()))).backward();  // micro-batch 2: then average
  sync.synchronize();
  // d/dw of sum(w.x + b) over both micro-batches: x + x*(1+r) = 2 + r per weight; mean 2.5
  CHECK(fc->parameters()[0].grad().to_vector() == std::vector<real>{2.5, 2.5});
  CHECK(fc->parameters()[1].grad().to_vector() == std::vector<real>{2});
}

TEST_CASE("checkpoints: rank 0 writes, every rank loads the same state") {
  std::unique_ptr<heed::test::TmpDir> tmp;
  const std::string path = shared_tmp_file(tmp, "ckpt.bin");

  manual_seed(5);
  Mlp model;
  optim::Adam opt(model.parameters(), optim::AdamOptions(1e-2));
  dist::GradientAverager sync(model);
  for (int s = 0; s < 3; ++s) {
    opt.zero_grad();
    sum(model.forward(ones({2, 4}) * (1.0 + dist::rank()))).backward();
    sync.synchronize();
    opt.step();
  }
  const uint64_t saved = dist::check_same_state_on_all_ranks(model, opt);
  dist::save_checkpoint_on_rank0(path, model, opt);

  // A fresh model on each rank, different weights, and no optimizer steps.
  manual_seed(50 + dist::rank());
  Mlp resumed;
  optim::Adam opt2(resumed.parameters(), optim::AdamOptions(1e-2));
  dist::load_checkpoint_on_all_ranks(path, resumed, opt2);
  CHECK(dist::check_same_state_on_all_ranks(resumed, opt2) == saved);
  CHECK(opt2.step_count() == 3);

  // Ranks that disagree are caught on every rank.
  if (dist::rank() == 1) resumed.parameters()[0].detach().data()[0] += 1;
  std::string msg;
  try {
    dist::check_same_state_on_all_ranks(resumed, opt2);
  } catch (const Error& e) {
    msg = e.what();
  }
  CHECK(msg.find("check_same_state_on_all_ranks: the ranks hold different") == 0);

  // A failed load on one rank is an error on all of them, not a hang.
  msg.clear();
  try {
    dist::load_checkpoint_on_all_ranks(dist::rank() == 1 ? path + ".missing" : path, resumed, opt2);
  } catch (const Error& e) {
    msg = e.what();
  }
  CHECK(!msg.empty());
  if (dist::rank() == 0) CHECK(msg.find("failed on another rank") != std::string::npos);
  dist::barrier();  // rank 0 removes the directory only after both have read it
}

TEST_CASE("README's MPI example compiles and runs (keep the two in step)") {
  auto model = std::make_shared<Mlp>();
  optim::Adam opt(model->parameters(), optim::AdamOptions(1e-3));
  const int64_t N = 10, epoch = 1;
  std::unique_ptr<heed::test::TmpDir> tmp;
  const std::string path = shared_tmp_file(tmp, "readme.ckpt");
  // -- from README "Training on several processes (MPI)" --
  dist::broadcast_parameters(*model);       // parameters and buffers from rank 0
  dist::GradientAverager sync(*model, dist::GradientAveragerOptions().bucket_bytes(25 << 20));
  data::DistributedSampler sampler(data::DistributedSamplerOptions(N, dist::rank(), dist::world_size()));
  sampler.set_epoch(epoch);                 // same permutation on every rank, new each epoch
  Tensor loss = sum(model->forward(ones({2, 4})));
  opt.zero_grad(); loss.backward(); sync.synchronize(); opt.step();
  dist::save_checkpoint_on_rank0(path, *model, opt);        // one writer
  dist::load_checkpoint_on_all_ranks(path, *model, opt);    // every rank, then compared
  // --
  CHECK(sampler.size() == 5);
  CHECK(opt.step_count() == 1);
  dist::barrier();  // rank 0 removes the directory only after both have read it
}
