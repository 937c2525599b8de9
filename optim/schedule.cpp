// schedule.cpp - the closed forms of schedule.h, and apply().
#include "schedule.h"

#include <algorithm>
#include <cmath>

#include "../core/error.h"

namespace heed::optim {

namespace {

constexpr double kPi = 3.14159265358979323846;

void check_step(const char* op, int64_t step) {
  HEED_CHECK(step >= 0, op, "step ", step, " is negative (steps count from 0)");
}

// A rate, a scale or a factor must be a finite number >= 0 (NaN fails it).
void check_rate(const char* op, const char* what, double v) {
  HEED_CHECK(std::isfinite(v) && v >= 0, op, "invalid ", what, " ", v, " (must be finite and >= 0)");
}

// lr * s / warmup during the warmup, the fraction of it done otherwise (1 if none).
double warmup_fraction(int64_t step, int64_t warmup) {
  return step < warmup ? double(step) / double(warmup) : 1.0;
}

void check_warmup_decay(const char* op, const WarmupDecayOptions& o) {
  check_rate(op, "lr", o.lr());
  HEED_CHECK(o.min_lr() >= 0 && o.min_lr() <= o.lr(), op, "invalid min_lr ", o.min_lr(),
             " (must be in [0, lr = ", o.lr(), "])");
  HEED_CHECK(o.warmup_steps() >= 0, op, "invalid warmup_steps ", o.warmup_steps(), " (must be >= 0)");
  HEED_CHECK(o.total_steps() >= o.warmup_steps(), op, "total_steps ", o.total_steps(),
             " is less than warmup_steps ", o.warmup_steps());
}

}  // namespace

// A group built with the optimizer's default lr follows the schedule; others keep their
// ratio to it. (A default lr of 0 gives no ratio: every group then follows the schedule.)
void LRSchedule::apply(Optimizer& opt, int64_t step) const {
  const double rate = lr_at(step), default_lr = opt.defaults().get_lr();
  for (ParamGroup& g : opt.param_groups())
    g.set_lr(default_lr > 0 ? rate * (g.initial_lr / default_lr) : rate);
}

// ---- TransformerWarmup: scale * d_model^-0.5 * min(n^-0.5, n * warmup^-1.5), n = step + 1

TransformerWarmup::TransformerWarmup(const TransformerWarmupOptions& o) : options_(o) {
  HEED_CHECK(o.d_model() > 0, "TransformerWarmup", "invalid d_model ", o.d_model(), " (must be > 0)");
  HEED_CHECK(o.warmup_steps() > 0, "TransformerWarmup", "invalid warmup_steps ", o.warmup_steps(),
             " (must be > 0)");
  check_rate("TransformerWarmup", "scale", o.scale());
}

double TransformerWarmup::lr_at(int64_t step) const {
  check_step("TransformerWarmup", step);
  // n = step + 1 in double: exact up to 2^53, and no int64 overflow at INT64_MAX
  const double n = double(step) + 1, w = double(options_.warmup_steps());
  return options_.scale() * std::pow(double(options_.d_model()), -0.5) *
         std::min(std::pow(n, -0.5), n * std::pow(w, -1.5));
}

// ---- LinearWarmupCosine: warmup, then half a cosine from lr down to min_lr

LinearWarmupCosine::LinearWarmupCosine(const LinearWarmupCosineOptions& o) : options_(o) {
  check_warmup_decay("LinearWarmupCosine", o);
}

double LinearWarmupCosine::lr_at(int64_t step) const {
  check_step("LinearWarmupCosine", step);
  const LinearWarmupCosineOptions& o = options_;
  if (step < o.warmup_steps()) return o.lr() * warmup_fraction(step, o.warmup_steps());
  const double span = double(std::max<int64_t>(1, o.total_steps() - o.warmup_steps()));
  const double q = std::min(1.0, double(step - o.warmup_steps()) / span);  // 0 -> 1 over the decay
  return o.min_lr() + (o.lr() - o.min_lr()) * 0.5 * (1 + std::cos(kPi * q));
}

// ---- LinearWarmupLinearDecay: warmup, then a straight line from lr down to min_lr

LinearWarmupLinearDecay::LinearWarmupLinearDecay(const LinearWarmupLinearDecayOptions& o) : options_(o) {
  check_warmup_decay("LinearWarmupLinearDecay", o);
}

double LinearWarmupLinearDecay::lr_at(int64_t step) const {
  check_step("LinearWarmupLinearDecay", step);
  const LinearWarmupLinearDecayOptions& o = options_;
  if (step < o.warmup_steps()) return o.lr() * warmup_fraction(step, o.warmup_steps());
  const double span = double(std::max<int64_t>(1, o.total_steps() - o.warmup_steps()));
  const double left = std::max(0.0, double(o.total_steps() - step) / span);  // 1 -> 0 over the decay
  return o.min_lr() + (o.lr() - o.min_lr()) * left;
}

// ---- Constant, after an optional linear warmup

Constant::Constant(const ConstantOptions& o) : options_(o) {
  check_rate("Constant", "lr", o.lr());
  HEED_CHECK(o.warmup_steps() >= 0, "Constant", "invalid warmup_steps ", o.warmup_steps(),
             " (must be >= 0)");
}

double Constant::lr_at(int64_t step) const {
  check_step("Constant", step);
  return options_.lr() * warmup_fraction(step, options_.warmup_steps());
}

// ---- StepDecay: lr * gamma^floor(step / step_size)

StepDecay::StepDecay(const StepDecayOptions& o) : options_(o) {
  check_rate("StepDecay", "lr", o.lr());
  HEED_CHECK(o.step_size() > 0, "StepDecay", "invalid step_size ", o.step_size(), " (must be > 0)");
  check_rate("StepDecay", "gamma", o.gamma());
}

double StepDecay::lr_at(int64_t step) const {
  check_step("StepDecay", step);
  if (options_.lr() == 0) return 0;  // as PyTorch's lr * gamma per step: 0 stays 0
  const double k = double(step / options_.step_size()), lr = options_.lr() * std::pow(options_.gamma(), k);
  // gamma > 1 grows without bound: past the largest double, an error (Python's float ** raises
  // OverflowError in PyTorch's closed form), never an infinite rate
  HEED_CHECK(std::isfinite(lr), "StepDecay", "the rate at step ", step, " overflows: lr ",
             options_.lr(), " * gamma ", options_.gamma(), "^", k);
  return lr;
}

}  // namespace heed::optim
