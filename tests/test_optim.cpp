// test_optim.cpp - optimizers, schedules and clipping: steps worked by hand, parameter
// groups, the state API, resuming, and every bad input as a heed::Error naming it.
// (The 20-step trajectories against torch.optim are in test_golden_optim.cpp.)
#include <cmath>
#include <limits>
#include <type_traits>

#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/linear.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/unary.h>
#include <heed/optim/adam.h>
#include <heed/optim/clip.h>
#include <heed/optim/optimizer.h>
#include <heed/optim/rmsprop.h>
#include <heed/optim/schedule.h>
#include <heed/optim/sgd.h>
#include "helpers.h"

using namespace heed;
using doctest::Approx;
using doctest::Contains;
using optim::ParamGroup;

namespace {

// A leaf that requires grad, with values `v` and gradient `g` (none if g is empty).
Tensor leaf(const std::vector<real>& v, const std::vector<real>& g = {}) {
  Tensor t = from_vector(v, {int64_t(v.size())}).requires_grad_();
  if (!g.empty()) t.set_grad(from_vector(g, {int64_t(g.size())}));
  return t;
}

// Gives every parameter the gradient 2 * p (of sum(p^2)) by running backward.
void backward_sum_squares(const std::vector<Tensor>& ps) {
  Tensor loss = sum(pow(ps[0], 2));
  for (size_t i = 1; i < ps.size(); ++i) loss = loss + sum(pow(ps[i], 2));
  loss.backward();
}

// An SGD whose default lr is `lr`: what a schedule reads its lr from.
optim::SGD sgd_with_lr(double lr) { return optim::SGD(std::vector<Tensor>{leaf({0})}, optim::SGDOptions(lr)); }

}  // namespace

// ---------------------------------------------------------------- updates by hand

TEST_CASE("optim: SGD steps by hand (plain, momentum, weight decay)") {
  Tensor p = leaf({1, -2}, {0.5, 1});
  optim::SGD plain({p}, optim::SGDOptions(0.1));
  plain.step();  // p - 0.1 * g
  CHECK(p.at({0}) == Approx(0.95));
  CHECK(p.at({1}) == Approx(-2.1));

  Tensor q = leaf({1, -2}, {0.5, 1});
  optim::SGD momentum({q}, optim::SGDOptions(0.1).momentum(0.9));
  momentum.step();  // b = g
  momentum.step();  // b = 0.9 g + g = 1.9 g  (dampening 0)
  CHECK(q.at({0}) == Approx(1 - 0.1 * 0.5 * 2.9));
  CHECK(momentum.state()[0].second.at({1}) == Approx(1.9));

  Tensor r = leaf({1, -2}, {0.5, 1});
  optim::SGD decay({r}, optim::SGDOptions(0.1).weight_decay(0.5));
  decay.step();  // d = g + 0.5 p
  CHECK(r.at({0}) == Approx(1 - 0.1 * (0.5 + 0.5)));
  CHECK(r.at({1}) == Approx(-2 - 0.1 * (1 - 1)));
}

TEST_CASE("optim: Adam's first step is lr * g / (|g| + eps), whatever the betas") {
  for (auto betas : {std::pair<double, double>{0.9, 0.999}, {0.5, 0.7}}) {
    Tensor p = leaf({1, -2, 3}, {0.5, -4, 1e-3});
    optim::Adam adam({p}, optim::AdamOptions(0.01).betas(betas));
    adam.step();
    CHECK(p.at({0}) == Approx(1 - 0.01 * 0.5 / (0.5 + 1e-8)));
    CHECK(p.at({1}) == Approx(-2 + 0.01 * 4 / (4 + 1e-8)));
    CHECK(p.at({2}) == Approx(3 - 0.01 * 1e-3 / (1e-3 + 1e-8)));
    CHECK(adam.step_count() == 1);
  }
}

TEST_CASE("optim: AdamW decays the weights before the update; its default weight_decay is 0.01") {
  CHECK(optim::AdamWOptions().weight_decay() == 0.01);
  CHECK(optim::AdamOptions().weight_decay() == 0);
  Tensor p = leaf({2}, {0.5});
  optim::AdamW adamw({p}, optim::AdamWOptions(0.1).weight_decay(0.5));
  adamw.step();  // p * (1 - 0.1 * 0.5) - 0.1 * g / (|g| + eps)
  CHECK(p.at({0}) == Approx(2 * 0.95 - 0.1));
  CHECK(std::string(adamw.name()) == "AdamW");
}

TEST_CASE("optim: RMSprop steps by hand (plain, centered, momentum, weight decay); torch's defaults") {
  const optim::RMSpropOptions d;
  CHECK(d.lr() == 1e-2);
  CHECK(d.alpha() == 0.99);
  CHECK(d.eps() == 1e-8);
  CHECK(d.weight_decay() == 0);
  CHECK(d.momentum() == 0);
  CHECK(!d.centered());

  // v = 0.01 g^2, so the first step is lr * g / (0.1 |g| + eps)
  Tensor p = leaf({1, -2}, {0.5, -4});
  optim::RMSprop plain({p}, optim::RMSpropOptions(0.01));
  plain.step();
  CHECK(p.at({0}) == Approx(1 - 0.01 * 0.5 / (0.1 * 0.5 + 1e-8)));
  CHECK(p.at({1}) == Approx(-2 + 0.01 * 4 / (0.1 * 4 + 1e-8)));
  CHECK(plain.state()[0].second.at({1}) == Approx(0.01 * 16));  // square_avg

  // centered: m = 0.01 g, avg = sqrt(0.01 g^2 - m^2) + eps = sqrt(0.0099) |g| + eps
  Tensor q = leaf({1}, {0.5});
  optim::RMSprop centered({q}, optim::RMSpropOptions(0.01).centered(true));
  centered.step();
  CHECK(q.at({0}) == Approx(1 - 0.01 * 0.5 / (std::sqrt(0.0099) * 0.5 + 1e-8)));
  CHECK(centered.state()[1].second.at({0}) == Approx(0.005));  // grad_avg

  // momentum: b = g / avg, then b = 0.9 b + g / avg' (v grown to 0.0199 g^2)
  Tensor r = leaf({1}, {0.5});
  optim::RMSprop momentum({r}, optim::RMSpropOptions(0.01).momentum(0.9).eps(0));
  momentum.step();
  momentum.step();
  const double b2 = 0.9 * 10 + 0.5 / (std::sqrt(0.0199) * 0.5);
  CHECK(momentum.state()[1].second.at({0}) == Approx(b2));  // momentum_buffer
  CHECK(r.at({0}) == Approx(1 - 0.01 * 10 - 0.01 * b2));

  // weight decay enters the gradient: g = 0.5 + 0.5 * 2
  Tensor w = leaf({2}, {0.5});
  optim::RMSprop decay({w}, optim::RMSpropOptions(0.01).weight_decay(0.5));
  decay.step();
  CHECK(decay.state()[0].second.at({0}) == Approx(0.01 * 1.5 * 1.5));
  CHECK(std::string(decay.name()) == "RMSprop");
}

TEST_CASE("optim: a parameter without a gradient is skipped, weight decay included") {
  Tensor w = leaf({1, 2}), u = leaf({3, 4});
  optim::SGD sgd({w, u}, optim::SGDOptions(0.1).momentum(0.9).weight_decay(0.1));
  optim::AdamW adamw({w, u}, optim::AdamWOptions(0.1));
  backward_sum_squares({w});
  sgd.step();
  adamw.step();
  CHECK(u.at({0}) == 3);
  CHECK(u.at({1}) == 4);
  CHECK(w.at({0}) != 1);
}

TEST_CASE("optim: zero_grad drops the gradients, or zeroes them in place") {
  Tensor w = leaf({1, 2});
  optim::SGD opt({w}, optim::SGDOptions(0.1));
  backward_sum_squares({w});
  const Tensor g = w.grad();
  opt.zero_grad(/*set_to_none=*/false);
  CHECK(w.grad().impl() == g.impl());
  CHECK(w.grad().at({1}) == 0);
  opt.zero_grad();
  CHECK(!w.grad().defined());
  opt.step();  // nothing has a gradient: nothing moves, the step is still counted
  CHECK(w.at({0}) == 1);
  CHECK(opt.step_count() == 1);
}

// ---------------------------------------------------------------- groups

TEST_CASE("optim: param groups take the defaults or their own options; lr is settable") {
  Tensor a = leaf({1}, {1}), b = leaf({1}, {1});
  optim::SGD opt({ParamGroup({a}), ParamGroup({b}, optim::SGDOptions(0.01))}, optim::SGDOptions(0.1));
  REQUIRE(opt.param_groups().size() == 2);
  CHECK(opt.param_groups()[0].lr() == 0.1);
  CHECK(opt.param_groups()[1].lr() == 0.01);
  opt.step();
  CHECK(a.at({0}) == Approx(0.9));
  CHECK(b.at({0}) == Approx(0.99));
  opt.param_groups()[1].set_lr(0.5);
  opt.step();
  CHECK(b.at({0}) == Approx(0.49));
  CHECK(opt.param_groups()[1].initial_lr == 0.01);

  Tensor c = leaf({1}, {1});
  opt.add_param_group(ParamGroup({c}, optim::SGDOptions(1.0)));
  opt.step();
  CHECK(c.at({0}) == Approx(0));
}

TEST_CASE("optim: bad options and parameters are heed::Errors naming the problem") {
  Tensor p = leaf({1, 2});
  const std::vector<Tensor> ps{p};
  CHECK_THROWS_WITH_AS((optim::SGD(ps, optim::SGDOptions(-0.1))), Contains("SGD: invalid learning rate -0.1"),
                       Error);
  CHECK_THROWS_WITH_AS((optim::SGD(ps, optim::SGDOptions(0.1).momentum(-1))), Contains("momentum"), Error);
  CHECK_THROWS_WITH_AS((optim::SGD(ps, optim::SGDOptions(0.1).nesterov(true))),
                       Contains("Nesterov momentum requires a momentum > 0"), Error);
  CHECK_THROWS_WITH_AS((optim::SGD(ps, optim::SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true))),
                       Contains("zero dampening"), Error);
  CHECK_THROWS_WITH_AS((optim::SGD(ps, optim::SGDOptions(0.1).weight_decay(-1))), Contains("weight_decay"),
                       Error);
  CHECK_THROWS_WITH_AS((optim::Adam(ps, optim::AdamOptions(-1e-3))), Contains("Adam: invalid learning rate"),
                       Error);
  CHECK_THROWS_WITH_AS((optim::Adam(ps, optim::AdamOptions().betas({1.0, 0.999}))),
                       Contains("invalid beta1 1"), Error);
  CHECK_THROWS_WITH_AS((optim::Adam(ps, optim::AdamOptions().betas({0.9, -0.1}))),
                       Contains("invalid beta2 -0.1"), Error);
  CHECK_THROWS_WITH_AS((optim::AdamW(ps, optim::AdamWOptions().eps(-1))), Contains("AdamW: invalid eps"),
                       Error);
  CHECK_THROWS_WITH_AS((optim::Adam(ps, optim::AdamOptions().lr(std::nan("")))), Contains("learning rate"),
                       Error);
  CHECK_THROWS_WITH_AS((optim::RMSprop(ps, optim::RMSpropOptions(-0.01))),
                       Contains("RMSprop: invalid learning rate -0.01 (must be >= 0)"), Error);
  CHECK_THROWS_WITH_AS((optim::RMSprop(ps, optim::RMSpropOptions().alpha(-0.5))),
                       Contains("RMSprop: invalid alpha -0.5"), Error);
  CHECK_THROWS_WITH_AS((optim::RMSprop(ps, optim::RMSpropOptions().eps(-1))), Contains("RMSprop: invalid eps -1"),
                       Error);
  CHECK_THROWS_WITH_AS((optim::RMSprop(ps, optim::RMSpropOptions().momentum(-0.9))),
                       Contains("RMSprop: invalid momentum -0.9"), Error);
  CHECK_THROWS_WITH_AS((optim::RMSprop(ps, optim::RMSpropOptions().weight_decay(-1))),
                       Contains("RMSprop: invalid weight_decay -1"), Error);
  CHECK_THROWS_WITH_AS((optim::RMSprop({ParamGroup({p}, optim::AdamOptions())})),
                       Contains("RMSprop: a param group has the options of another optimizer (use RMSpropOptions)"),
                       Error);

  // parameters
  CHECK_THROWS_WITH_AS((optim::SGD(std::vector<Tensor>{}, optim::SGDOptions(0.1))),
                       Contains("empty parameter list"), Error);
  CHECK_THROWS_WITH_AS((optim::SGD({p * 2}, optim::SGDOptions(0.1))), Contains("is not a leaf"), Error);
  CHECK_THROWS_WITH_AS((optim::SGD({p, p}, optim::SGDOptions(0.1))),
                       Contains("is already group 0 parameter 0"), Error);
  CHECK_THROWS_WITH_AS((optim::Adam({ParamGroup({p}, optim::SGDOptions(0.1))})),
                       Contains("options of another optimizer"), Error);

  // options changed after construction
  optim::SGD opt(ps, optim::SGDOptions(0.1));
  opt.param_groups()[0].set_lr(-1);
  CHECK_THROWS_WITH_AS(opt.step(), Contains("invalid learning rate -1"), Error);
  opt.param_groups()[0].set_lr(0.1);
  static_cast<optim::SGDOptions&>(*opt.param_groups()[0].options).momentum(0.9);
  CHECK_THROWS_WITH_AS(opt.step(), Contains("needs other state"), Error);
}

// Each optimizer is built from its own options type only (libtorch's rule). AdamW from
// AdamOptions would run with weight_decay 0 instead of torch's 0.01; it does not compile.
using Params = std::vector<Tensor>;
using Groups = std::vector<ParamGroup>;
static_assert(!std::is_constructible_v<optim::AdamW, Params, optim::AdamOptions>);
static_assert(!std::is_constructible_v<optim::AdamW, Groups, optim::AdamOptions>);
static_assert(!std::is_constructible_v<optim::Adam, Params, optim::AdamWOptions>);
static_assert(!std::is_constructible_v<optim::Adam, Groups, optim::AdamWOptions>);
static_assert(!std::is_constructible_v<optim::SGD, Params, optim::AdamOptions>);
static_assert(!std::is_constructible_v<optim::Adam, Params, optim::SGDOptions>);
static_assert(std::is_constructible_v<optim::AdamW, Params, optim::AdamWOptions>);
static_assert(std::is_constructible_v<optim::Adam, Params, optim::AdamOptions>);
static_assert(std::is_constructible_v<optim::SGD, Params, optim::SGDOptions>);
static_assert(std::is_constructible_v<optim::RMSprop, Params, optim::RMSpropOptions>);
static_assert(std::is_constructible_v<optim::RMSprop, Groups>);  // torch's defaults, lr 1e-2
static_assert(!std::is_constructible_v<optim::RMSprop, Params, optim::AdamOptions>);
static_assert(!std::is_constructible_v<optim::Adam, Groups, optim::RMSpropOptions>);
static_assert(!std::is_constructible_v<optim::SGD, Params>);  // SGD's lr has no default
// a bare learning rate, as libtorch's optim::SGD opt(params, 0.1)
static_assert(std::is_constructible_v<optim::SGD, Params, double>);
static_assert(std::is_constructible_v<optim::Adam, Params, double>);
static_assert(std::is_constructible_v<optim::AdamW, Params, double>);
static_assert(std::is_constructible_v<optim::RMSprop, Params, double>);
// the chained setters keep the concrete type
static_assert(std::is_same_v<decltype(optim::AdamWOptions().eps(1e-6)), optim::AdamWOptions&>);
static_assert(std::is_same_v<decltype(optim::AdamOptions().amsgrad(true)), optim::AdamOptions&>);

TEST_CASE("optim: a param group with another optimizer's options is a heed::Error (AdamW vs Adam)") {
  Tensor p = leaf({1, 2}), q = leaf({3});
  CHECK_THROWS_WITH_AS((optim::AdamW({ParamGroup({p}), ParamGroup({q}, optim::AdamOptions(0.1))})),
                       Contains("AdamW: a param group has the options of another optimizer (use AdamWOptions)"),
                       Error);
  CHECK_THROWS_WITH_AS((optim::Adam({ParamGroup({p}, optim::AdamWOptions(0.1))})),
                       Contains("Adam: a param group has the options of another optimizer (use AdamOptions)"),
                       Error);
  optim::AdamW opt({p}, optim::AdamWOptions(0.1).eps(1e-6));
  CHECK_THROWS_WITH_AS(opt.add_param_group(ParamGroup({q}, optim::AdamOptions(0.1))),
                       Contains("options of another optimizer"), Error);
  opt.add_param_group(ParamGroup({q}, optim::AdamWOptions(0.2)));  // its own type is fine
  CHECK(opt.param_groups().size() == 2);
  CHECK(static_cast<const optim::AdamWOptions&>(opt.defaults()).weight_decay() == 0.01);
  CHECK(static_cast<const optim::AdamWOptions&>(opt.defaults()).eps() == 1e-6);
}

// ---------------------------------------------------------------- state

TEST_CASE("optim: state() names every buffer group<g>.param<p>.<slot>") {
  Tensor w = leaf({1, 2}), b = leaf({3});
  optim::Adam ams({ParamGroup({w}), ParamGroup({b}, optim::AdamOptions().amsgrad(true))});
  std::vector<std::string> names;
  for (const auto& [n, t] : ams.state()) names.push_back(n);
  CHECK(names == std::vector<std::string>{"group0.param0.exp_avg", "group0.param0.exp_avg_sq",
                                          "group1.param0.exp_avg", "group1.param0.exp_avg_sq",
                                          "group1.param0.max_exp_avg_sq"});
  CHECK(ams.state()[2].second.shape() == Shape{1});

  CHECK(optim::SGD({w, b}, optim::SGDOptions(0.1)).state().empty());  // no momentum, no state
  const auto sgd_state = optim::SGD({w, b}, optim::SGDOptions(0.1).momentum(0.9)).state();
  REQUIRE(sgd_state.size() == 2);
  CHECK(sgd_state[1].first == "group0.param1.momentum_buffer");

  names.clear();
  optim::RMSprop rms({ParamGroup({w}), ParamGroup({b}, optim::RMSpropOptions().momentum(0.9).centered(true))});
  for (const auto& [n, t] : rms.state()) names.push_back(n);
  CHECK(names == std::vector<std::string>{"group0.param0.square_avg", "group1.param0.square_avg",
                                          "group1.param0.momentum_buffer", "group1.param0.grad_avg"});
  CHECK(optim::RMSprop({w}, optim::RMSpropOptions().centered(true)).state()[1].first == "group0.param0.grad_avg");
}

// Train N steps, carry the state into a fresh optimizer on copied parameters, train M
// more in both: the parameters must be bitwise identical (the schedule is closed form).
TEST_CASE("optim: load_state resumes bitwise (Adam amsgrad, SGD dampened momentum, RMSprop, with a schedule)") {
  auto resume_check = [](auto make) {
    Tensor w = leaf({1, -2, 0.5}), b = leaf({0.3});
    auto opt = make(std::vector<Tensor>{w, b});
    const optim::LinearWarmupCosine schedule(opt, optim::LinearWarmupCosineOptions(3, 10));
    auto train = [&](auto& o, const std::vector<Tensor>& ps, int steps) {
      for (int i = 0; i < steps; ++i) {
        schedule.apply(o, o.step_count());
        o.zero_grad();
        backward_sum_squares(ps);
        o.step();
      }
    };
    train(opt, {w, b}, 4);

    Tensor w2 = leaf(w.to_vector()), b2 = leaf(b.to_vector());
    auto resumed = make(std::vector<Tensor>{w2, b2});
    optim::NamedTensors saved;
    for (const auto& [n, t] : opt.state()) saved.emplace_back(n, clone(t));
    resumed.load_state(saved, opt.step_count());
    CHECK(resumed.step_count() == 4);

    train(opt, {w, b}, 5);
    train(resumed, {w2, b2}, 5);
    CHECK(w.to_vector() == w2.to_vector());
    CHECK(b.to_vector() == b2.to_vector());
  };
  resume_check(
      [](const std::vector<Tensor>& ps) { return optim::Adam(ps, optim::AdamOptions(0.05).amsgrad(true)); });
  resume_check([](const std::vector<Tensor>& ps) {
    return optim::SGD(ps, optim::SGDOptions(0.1).momentum(0.9).dampening(0.2));
  });
  resume_check([](const std::vector<Tensor>& ps) {
    return optim::RMSprop(ps, optim::RMSpropOptions(0.05).momentum(0.5).centered(true).weight_decay(0.1));
  });
}

TEST_CASE("optim: load_state refuses a wrong name, shape, duplicate or missing tensor, and changes nothing") {
  Tensor w = leaf({1, 2}, {1, 1});
  optim::Adam opt({w});
  opt.step();
  const std::vector<real> before = opt.state()[0].second.to_vector();
  auto state = [&](const std::string& second_name, const Shape& second_shape) {
    return optim::NamedTensors{{"group0.param0.exp_avg", zeros({2})}, {second_name, zeros(second_shape)}};
  };
  CHECK_THROWS_WITH_AS(opt.load_state(state("group0.param0.momentum_buffer", {2}), 1),
                       Contains("Adam.load_state: unexpected state tensor 'group0.param0.momentum_buffer'"),
                       Error);
  CHECK_THROWS_WITH_AS(opt.load_state(state("group0.param0.exp_avg_sq", {3}), 1),
                       Contains("'group0.param0.exp_avg_sq' has shape (3) but its parameter has shape (2)"),
                       Error);
  CHECK_THROWS_WITH_AS(opt.load_state(state("group0.param0.exp_avg", {2}), 1), Contains("appears twice"),
                       Error);
  CHECK_THROWS_WITH_AS(opt.load_state({{"group0.param0.exp_avg", zeros({2})}}, 1),
                       Contains("'group0.param0.exp_avg_sq' is missing"), Error);
  CHECK_THROWS_WITH_AS(opt.load_state(opt.state(), -1), Contains("step count -1 is negative"), Error);
  CHECK(opt.state()[0].second.to_vector() == before);
  CHECK(opt.step_count() == 1);

  opt.load_state(state("group0.param0.exp_avg_sq", {2}), 7);
  CHECK(opt.state()[0].second.at({0}) == 0);
  CHECK(opt.step_count() == 7);
}

// ---------------------------------------------------------------- schedules

TEST_CASE("optim: schedules at their landmarks") {
  const optim::SGD one = sgd_with_lr(1.0);  // the peak of the warmup-decay schedules
  const optim::TransformerWarmup noam(one, optim::TransformerWarmupOptions(512, 4000));
  CHECK(noam.lr_at(0) == Approx(std::pow(512, -0.5) * std::pow(4000, -1.5)));       // step 1
  CHECK(noam.lr_at(3999) == Approx(std::pow(512, -0.5) * std::pow(4000, -0.5)));    // the peak, step 4000
  CHECK(noam.lr_at(15999) == Approx(std::pow(512, -0.5) * std::pow(16000, -0.5)));  // after: n^-0.5

  const optim::LinearWarmupCosine cosine(one, optim::LinearWarmupCosineOptions(10, 110).min_lr(0.1));
  CHECK(cosine.lr_at(0) == 0);
  CHECK(cosine.lr_at(5) == Approx(0.5));
  CHECK(cosine.lr_at(10) == Approx(1.0));
  CHECK(cosine.lr_at(60) == Approx(0.55));  // half way down
  CHECK(cosine.lr_at(110) == Approx(0.1));
  CHECK(cosine.lr_at(1000) == Approx(0.1));  // held at min_lr

  const optim::LinearWarmupLinearDecay linear(one, optim::LinearWarmupLinearDecayOptions(10, 110));
  CHECK(linear.lr_at(60) == Approx(0.5));
  CHECK(linear.lr_at(200) == 0);
  CHECK(optim::Constant(sgd_with_lr(0.3)).lr_at(12345) == 0.3);
  CHECK(optim::StepDecay(one, optim::StepDecayOptions(10)).lr_at(25) == Approx(0.01));
}

TEST_CASE("optim: LRSchedule::apply keeps each group's ratio to the default lr") {
  Tensor a = leaf({1}), b = leaf({1});
  optim::Adam opt({ParamGroup({a}), ParamGroup({b}, optim::AdamOptions(0.05))}, optim::AdamOptions(0.1));
  const optim::StepDecay schedule(opt, optim::StepDecayOptions(10).gamma(0.5));
  CHECK(schedule.default_lr() == 0.1);
  CHECK(schedule.base_lrs() == std::vector<double>{0.1, 0.05});
  schedule.apply(opt, 10);
  CHECK(opt.param_groups()[0].lr() == Approx(0.05));
  CHECK(opt.param_groups()[1].lr() == Approx(0.025));
  schedule.apply(opt, 0);  // closed form: any step, in any order
  CHECK(opt.param_groups()[0].lr() == Approx(0.1));
}

TEST_CASE("optim: a schedule reads each group's initial lr, not the lr set since; apply checks the groups") {
  Tensor a = leaf({1}), b = leaf({1});
  optim::SGD opt({a}, optim::SGDOptions(0.2));
  opt.param_groups()[0].set_lr(0.7);  // as load_checkpoint restores a scheduled lr
  const optim::LinearWarmupLinearDecay schedule(opt, optim::WarmupDecayOptions(0, 10));
  CHECK(schedule.default_lr() == 0.2);
  CHECK(schedule.base_lrs() == std::vector<double>{0.2});
  schedule.apply(opt, 5);
  CHECK(opt.param_groups()[0].lr() == Approx(0.1));  // half way down from 0.2

  opt.add_param_group(ParamGroup({b}, optim::SGDOptions(0.4)));
  CHECK_THROWS_WITH_AS(schedule.apply(opt, 6),
                       Contains("LRSchedule::apply: the SGD has 2 param groups but the schedule read 1"), Error);
  CHECK(opt.param_groups()[0].lr() == Approx(0.1));  // the refusal set nothing
  const optim::LinearWarmupLinearDecay rebuilt(opt, optim::WarmupDecayOptions(0, 10));
  rebuilt.apply(opt, 5);
  CHECK(opt.param_groups()[1].lr() == Approx(0.2));  // twice the default group's rate
}

TEST_CASE("optim: bad schedule options and negative steps are heed::Errors") {
  using namespace optim;
  const SGD sgd = sgd_with_lr(0.1);
  CHECK_THROWS_WITH_AS(TransformerWarmup(sgd, TransformerWarmupOptions(0, 4000)),
                       Contains("TransformerWarmup: invalid d_model 0"), Error);
  CHECK_THROWS_WITH_AS(TransformerWarmup(sgd, TransformerWarmupOptions(512, 0)),
                       Contains("invalid warmup_steps 0"), Error);
  CHECK_THROWS_WITH_AS(LinearWarmupCosine(sgd, LinearWarmupCosineOptions(10, 5)),
                       Contains("total_steps 5 is less than warmup_steps 10"), Error);
  CHECK_THROWS_WITH_AS(LinearWarmupCosine(sgd, LinearWarmupCosineOptions(0, 5).min_lr(0.2)),
                       Contains("invalid min_lr 0.2 (must be in [0, the optimizer's lr = 0.1])"), Error);
  const SGD infinite = sgd_with_lr(std::numeric_limits<double>::infinity());  // SGD takes it
  CHECK_THROWS_WITH_AS(LinearWarmupLinearDecay(infinite, LinearWarmupLinearDecayOptions(0, 5)),
                       Contains("LinearWarmupLinearDecay: invalid lr inf"), Error);
  CHECK_THROWS_WITH_AS(Constant(sgd, ConstantOptions().warmup_steps(-1)), Contains("invalid warmup_steps -1"),
                       Error);
  CHECK_THROWS_WITH_AS(StepDecay(sgd, StepDecayOptions(0)), Contains("StepDecay: invalid step_size 0"),
                       Error);
  CHECK_THROWS_WITH_AS(Constant(sgd).lr_at(-1), Contains("step -1 is negative"), Error);
}

// ---------------------------------------------------------------- clipping

TEST_CASE("optim: clip_grad_norm_ by hand; parameters without grads are skipped") {
  Tensor a = leaf({0, 0}, {3, 0}), b = leaf({0}, {4}), none = leaf({0});
  const double total = optim::clip_grad_norm_({a, b, none}, 1.0);
  CHECK(total == Approx(5));
  const double c = 1.0 / (5 + 1e-6);
  CHECK(a.grad().at({0}) == Approx(3 * c));
  CHECK(b.grad().at({0}) == Approx(4 * c));
  CHECK(!none.grad().defined());

  CHECK(optim::clip_grad_norm_({a, b}, 10.0) == Approx(1));  // below max_norm: untouched
  CHECK(b.grad().at({0}) == Approx(4 * c));
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(optim::clip_grad_norm_({a, b}, 10.0, inf) == Approx(4 * c));
  CHECK(optim::clip_grad_norm_({none}, 1.0) == 0);  // no gradients at all

  CHECK_THROWS_WITH_AS(optim::clip_grad_norm_({a}, 1.0, 0), Contains("norm_type 0"), Error);
  CHECK_THROWS_WITH_AS(optim::clip_grad_norm_({a}, -1.0), Contains("max_norm -1"), Error);
}

TEST_CASE("optim: a non-finite gradient norm is returned (PyTorch's default) or raised on request") {
  Tensor a = leaf({0, 0}, {std::nanf(""), 1});
  CHECK_THROWS_WITH_AS(optim::clip_grad_norm_({a}, 1.0, 2, /*error_if_nonfinite=*/true),
                       Contains("clip_grad_norm_: the total norm of order 2 of the gradients is nan"), Error);
  CHECK(a.grad().at({1}) == 1);  // untouched by the refusal
  CHECK(std::isnan(optim::clip_grad_norm_({a}, 1.0)));
  CHECK(std::isnan(a.grad().at({1})));  // as in PyTorch, the NaN spreads

  Tensor b = leaf({0, 0}, {INFINITY, 1});
  CHECK(std::isinf(optim::clip_grad_norm_({b}, 1.0)));
  CHECK(b.grad().at({1}) == 0);  // coef = 1 / inf
}

TEST_CASE("optim: clip_grad_value_ clamps every element to [-c, c]") {
  Tensor a = leaf({0, 0, 0}, {-2, 0.1f, 5}), none = leaf({0});
  optim::clip_grad_value_({a, none}, 0.5);
  CHECK(a.grad().to_vector() == std::vector<real>{-0.5, 0.1f, 0.5});
  CHECK_THROWS_WITH_AS(optim::clip_grad_value_({a}, -1), Contains("clip_value -1 is negative"), Error);
}

TEST_CASE("optim: large tensors (the parallel loops) update exactly as small ones") {
  const int64_t n = 7 * 10000;  // above kGrainElementwise
  std::vector<real> g(n);
  for (int64_t i = 0; i < n; ++i) g[i] = real(i % 7 - 3);
  Tensor big = leaf(std::vector<real>(n, 1), g);
  Tensor small = leaf(std::vector<real>(7, 1), std::vector<real>(g.begin(), g.begin() + 7));
  optim::Adam adam({big, small}, optim::AdamOptions(0.1).weight_decay(0.1).amsgrad(true));
  for (int s = 0; s < 3; ++s) adam.step();
  bool same = true;
  for (int64_t i = 0; i < n; ++i) same = same && big.data()[i] == small.data()[i % 7];
  CHECK(same);

  // sum of squares: 10000 * (9 + 4 + 1 + 0 + 1 + 4 + 9)
  CHECK(optim::clip_grad_norm_({big}, 1e9) == Approx(std::sqrt(280000.0)));
  CHECK(optim::clip_grad_norm_({big}, 1e9, std::numeric_limits<double>::infinity()) == 3);
}

TEST_CASE("optim: AMSGrad keeps a NaN second moment in its running maximum, as torch.maximum") {
  Tensor w = zeros({3}).requires_grad_();
  optim::Adam opt({w}, optim::AdamOptions(0.1).amsgrad(true));
  const real nan = std::numeric_limits<real>::quiet_NaN();
  for (const std::vector<real>& g : {std::vector<real>{1, nan, 2}, std::vector<real>{1, 1, 1}}) {
    w.set_grad(from_vector(g, {3}));
    opt.step();
  }
  Tensor v_max;
  for (const auto& [name, t] : opt.state())
    if (name.find("max_exp_avg_sq") != std::string::npos) v_max = t;
  REQUIRE(v_max.defined());
  CHECK(std::isfinite(v_max.data()[0]));
  CHECK(std::isnan(v_max.data()[1]));  // std::max(v_max, NaN) would have kept the old value
  CHECK(std::isfinite(v_max.data()[2]));
}
