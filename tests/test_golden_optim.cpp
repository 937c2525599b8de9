// test_golden_optim.cpp - heed's optimizers, schedules and clipping against PyTorch
// (tests/golden/optim.bin, made by tests/golden/gen_optim.py, whose CASES table the
// hyper-parameters below repeat).
//
// Trajectories: 20 steps on  loss = mean((X @ W + b - Y)^2)  with a parameter u that gets
// no gradient; the loss before each step, W and b after steps 1, 2, 5, 10, 20, group 0's
// lr at each step and the final optimizer state must match torch.optim (float64) at
// rtol 1e-5, atol 1e-6 x scale (golden.h's rule), and u must be untouched.
#include <functional>
#include <memory>

#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/optim/adam.h>
#include <heed/optim/clip.h>
#include <heed/optim/optimizer.h>
#include <heed/optim/rmsprop.h>
#include <heed/optim/schedule.h>
#include <heed/optim/sgd.h>
#include "golden/golden.h"
#include "helpers.h"

using namespace heed;
using optim::ParamGroup;

namespace {

const golden::File& file() {
  static const golden::File f("tests/golden/optim.bin");
  return f;
}

void check(const Tensor& actual, const std::string& c, const std::string& name) {
  const golden::Check r = golden::compare(actual, file().tensor(c, name), c + " " + name);
  CHECK_MESSAGE(r.ok, r.message);
}

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(Tensor W, Tensor b, Tensor u)>;
using MakeSchedule = std::function<std::unique_ptr<optim::LRSchedule>(const optim::Optimizer&)>;

void check_trajectory(const std::string& c, const MakeOptimizer& make, const MakeSchedule& make_schedule = nullptr) {
  const Tensor X = file().tensor(c, "X"), Y = file().tensor(c, "Y");  // (8, 4), (8, 3)
  Tensor W = file().tensor(c, "W").requires_grad_();                  // (4, 3)
  Tensor b = file().tensor(c, "b").requires_grad_();                  // (3)
  Tensor u = file().tensor(c, "u").requires_grad_();                  // (2), not in the loss
  std::unique_ptr<optim::Optimizer> opt = make(W, b, u);
  const std::unique_ptr<optim::LRSchedule> schedule = make_schedule ? make_schedule(*opt) : nullptr;

  std::vector<real> losses, lrs;
  for (int step = 1; step <= 20; ++step) {
    if (schedule) schedule->apply(*opt, opt->step_count());
    opt->zero_grad();
    Tensor loss = mean(pow(matmul(X, W) + b - Y, 2));
    loss.backward();
    losses.push_back(loss.item());
    lrs.push_back(real(opt->param_groups()[0].lr()));
    opt->step();
    if (step == 1 || step == 2 || step == 5 || step == 10 || step == 20) {
      check(W, c, "W_step" + std::to_string(step));
      check(b, c, "b_step" + std::to_string(step));
    }
  }
  check(from_vector(losses, {20}), c, "loss");
  check(from_vector(lrs, {20}), c, "lr");
  check(u, c, "u");  // no gradient: skipped
  CHECK(!u.grad().defined());

  // torch keeps state only for parameters that had a gradient; heed's for u stays zero.
  int matched = 0;
  for (const auto& [name, t] : opt->state()) {
    if (file().has(c, name)) {
      check(t, c, name);
      ++matched;
    } else {
      CHECK_MESSAGE(test::allclose(t, zeros_like(t)), c << " " << name << " should be zeros");
    }
  }
  int stored = 0;
  for (const std::string& a : file().arrays(c)) stored += a.rfind("group", 0) == 0;
  CHECK_MESSAGE(matched == stored, c << ": heed's state names " << matched << " of torch's " << stored);
  CHECK(opt->step_count() == 20);
}

// The schedule `S` with `options`, built from the optimizer (its lr is the peak).
template <class S, class Options>
MakeSchedule schedule_of(const Options& options) {
  return [options](const optim::Optimizer& opt) { return std::make_unique<S>(opt, options); };
}

template <class Opt, class Options>
MakeOptimizer one_group(const Options& options) {
  return [options](Tensor W, Tensor b, Tensor u) {
    return std::make_unique<Opt>(std::vector<Tensor>{W, b, u}, options);
  };
}

}  // namespace

TEST_CASE("golden optim: SGD plain, momentum with dampening, nesterov, weight decay") {
  check_trajectory("sgd", one_group<optim::SGD>(optim::SGDOptions(0.1)));
  check_trajectory("sgd_momentum",
                   one_group<optim::SGD>(optim::SGDOptions(0.05).momentum(0.9).dampening(0.1)));
  check_trajectory("sgd_nesterov",
                   one_group<optim::SGD>(optim::SGDOptions(0.05).momentum(0.9).nesterov(true)));
  check_trajectory("sgd_weight_decay",
                   one_group<optim::SGD>(optim::SGDOptions(0.1).momentum(0.5).weight_decay(0.1)));
}

TEST_CASE("golden optim: Adam plain, weight decay, large eps, amsgrad; AdamW") {
  check_trajectory("adam", one_group<optim::Adam>(optim::AdamOptions(0.05)));
  check_trajectory("adam_weight_decay", one_group<optim::Adam>(optim::AdamOptions(0.05).weight_decay(0.1)));
  check_trajectory("adam_large_eps", one_group<optim::Adam>(optim::AdamOptions(0.05).eps(0.1)));
  check_trajectory("adam_amsgrad",
                   one_group<optim::Adam>(optim::AdamOptions(0.05).betas({0.8, 0.99}).amsgrad(true)));
  check_trajectory("adamw", one_group<optim::AdamW>(optim::AdamWOptions(0.05).weight_decay(0.1)));
}

TEST_CASE("golden optim: RMSprop plain, weight decay, momentum, centered, centered with momentum") {
  check_trajectory("rmsprop", one_group<optim::RMSprop>(optim::RMSpropOptions()));  // lr 1e-2, torch's default
  check_trajectory("rmsprop_weight_decay", one_group<optim::RMSprop>(optim::RMSpropOptions(0.01).weight_decay(0.1)));
  check_trajectory("rmsprop_momentum",
                   one_group<optim::RMSprop>(optim::RMSpropOptions(0.01).momentum(0.9).eps(0.05)));
  check_trajectory("rmsprop_centered",
                   one_group<optim::RMSprop>(optim::RMSpropOptions(0.01).alpha(0.9).centered(true)));
  check_trajectory("rmsprop_centered_momentum",
                   one_group<optim::RMSprop>(
                       optim::RMSpropOptions(0.02).alpha(0.9).eps(0.1).momentum(0.5).centered(true)));
}

TEST_CASE("golden optim: Adam with two param groups (own lr and weight decay)") {
  check_trajectory("adam_groups", [](Tensor W, Tensor b, Tensor u) {
    return std::make_unique<optim::Adam>(
        std::vector<ParamGroup>{ParamGroup({W}),
                                ParamGroup({b, u}, optim::AdamOptions(0.01).weight_decay(0.1))},
        optim::AdamOptions(0.05));
  });
}

TEST_CASE("golden optim: trajectories under schedules (StepLR, Noam via LambdaLR, cosine on two groups)") {
  check_trajectory("sgd_step_decay", one_group<optim::SGD>(optim::SGDOptions(0.1).momentum(0.9)),
                   schedule_of<optim::StepDecay>(optim::StepDecayOptions(5).gamma(0.5)));

  check_trajectory("adam_noam", one_group<optim::Adam>(optim::AdamOptions(1.0).betas({0.9, 0.98}).eps(1e-9)),
                   schedule_of<optim::TransformerWarmup>(optim::TransformerWarmupOptions(16, 5).scale(2.0)));

  // group 1 was built with half the default lr, so it gets half the schedule (LambdaLR's rule)
  check_trajectory(
      "adamw_cosine_groups",
      [](Tensor W, Tensor b, Tensor u) {
        return std::make_unique<optim::AdamW>(
            std::vector<ParamGroup>{ParamGroup({W}), ParamGroup({b, u}, optim::AdamWOptions(0.025))},
            optim::AdamWOptions(0.05));
      },
      schedule_of<optim::LinearWarmupCosine>(optim::LinearWarmupCosineOptions(5, 20).min_lr(0.005)));
}

// ---- schedules: lr_at(k) for k = 0..39 against torch's schedulers or the formula ----

namespace {

void check_schedule(const std::string& c, const optim::LRSchedule& s) {
  const std::vector<double>& lr = file().array(c, "lr").data;
  for (size_t k = 0; k < lr.size(); ++k)
    CHECK_MESSAGE(s.lr_at(int64_t(k)) == doctest::Approx(lr[k]).epsilon(1e-12),
                  c << " step " << k << ": heed " << s.lr_at(int64_t(k)) << " torch " << lr[k]);
}

}  // namespace

TEST_CASE("golden optim: every schedule's values at steps 0..39") {
  using namespace optim;
  // the optimizers the schedules read their lr from, as gen_optim.py's torch_lrs
  const Tensor w = zeros({1}).requires_grad_();
  const SGD one(std::vector<Tensor>{w}, SGDOptions(1.0)), tenth(std::vector<Tensor>{w}, SGDOptions(0.1));
  check_schedule("sched_transformer", TransformerWarmup(one, TransformerWarmupOptions(16, 5).scale(2.0)));
  check_schedule("sched_transformer_d512", TransformerWarmup(one, TransformerWarmupOptions(512, 10)));
  check_schedule("sched_cosine", LinearWarmupCosine(tenth, LinearWarmupCosineOptions(5, 30).min_lr(0.01)));
  check_schedule("sched_cosine_nowarmup", LinearWarmupCosine(tenth, LinearWarmupCosineOptions(0, 30)));
  check_schedule("sched_linear", LinearWarmupLinearDecay(tenth, LinearWarmupLinearDecayOptions(5, 30)));
  check_schedule("sched_linear_min_lr",
                 LinearWarmupLinearDecay(tenth, LinearWarmupLinearDecayOptions(5, 30).min_lr(0.02)));
  check_schedule("sched_constant", Constant(tenth, ConstantOptions().warmup_steps(4)));
  check_schedule("sched_step", StepDecay(tenth, StepDecayOptions(7).gamma(0.5)));
}

// ---- clipping: torch.nn.utils on the same three gradients ----

namespace {

// Parameters whose gradients are the case's g0, g1, g2.
std::vector<Tensor> params_with_grads(const std::string& c) {
  std::vector<Tensor> ps;
  for (int i = 0; i < 3; ++i) {
    const Tensor g = file().tensor(c, "g" + std::to_string(i));
    Tensor p = zeros(g.shape()).requires_grad_();
    p.set_grad(g);
    ps.push_back(p);
  }
  return ps;
}

void check_clip_norm(const std::string& c, double max_norm, double norm_type) {
  const std::vector<Tensor> ps = params_with_grads(c);
  const double total = optim::clip_grad_norm_(ps, max_norm, norm_type);
  CHECK_MESSAGE(total == doctest::Approx(file().array(c, "total").data[0]).epsilon(1e-5),
                c << " total " << total);
  for (int i = 0; i < 3; ++i) check(ps[i].grad(), c, "out" + std::to_string(i));
}

}  // namespace

TEST_CASE("golden optim: clip_grad_norm_ (2, 1, 3, inf; clipping and not) and clip_grad_value_") {
  check_clip_norm("clip_norm2", 1.0, 2);
  check_clip_norm("clip_norm2_noclip", 100.0, 2);
  check_clip_norm("clip_norm1", 2.0, 1);
  check_clip_norm("clip_norm3", 0.5, 3);
  check_clip_norm("clip_norm_inf", 0.5, std::numeric_limits<double>::infinity());

  const std::vector<Tensor> ps = params_with_grads("clip_value");
  optim::clip_grad_value_(ps, 0.3);
  for (int i = 0; i < 3; ++i) check(ps[i].grad(), "clip_value", "out" + std::to_string(i));
}
