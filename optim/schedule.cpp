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

void check_warmup_decay(const char* op, const WarmupDecayOptions& o, double lr) {
  check_rate(op, "lr", lr);
  HEED_CHECK(o.min_lr() >= 0 && o.min_lr() <= lr, op, "invalid min_lr ", o.min_lr(),
             " (must be in [0, the optimizer's lr = ", lr, "])");
  HEED_CHECK(o.warmup_steps() >= 0, op, "invalid warmup_steps ", o.warmup_steps(), " (must be >= 0)");
  HEED_CHECK(o.total_steps() >= o.warmup_steps(), op, "total_steps ", o.total_steps(),
             " is less than warmup_steps ", o.warmup_steps());
}

}  // namespace

LRSchedule::LRSchedule(const Optimizer& opt) : default_lr_(opt.defaults().get_lr()) {
  for (const ParamGroup& g : opt.param_groups()) base_lrs_.push_back(g.initial_lr);
}

// A group built with the optimizer's default lr follows the schedule; others keep their
// ratio to it. (A default lr of 0 gives no ratio: every group then follows the schedule.)
void LRSchedule::apply(Optimizer& opt, int64_t step) const {
  const double rate = lr_at(step);
  std::vector<ParamGroup>& groups = opt.param_groups();
  HEED_CHECK(groups.size() == base_lrs_.size(), "LRSchedule::apply", "the ", opt.name(), " has ",
             groups.size(), " param groups but the schedule read ", base_lrs_.size(),
             " (build the schedule after the last add_param_group)");
  for (size_t g = 0; g < groups.size(); ++g)
    groups[g].set_lr(default_lr_ > 0 ? rate * (base_lrs_[g] / default_lr_) : rate);
}

// ---- TransformerWarmup: scale * d_model^-0.5 * min(n^-0.5, n * warmup^-1.5), n = step + 1

TransformerWarmup::TransformerWarmup(const Optimizer& opt, const TransformerWarmupOptions& o)
    : LRSchedule(opt), options_(o) {
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

LinearWarmupCosine::LinearWarmupCosine(const Optimizer& opt, const LinearWarmupCosineOptions& o)
    : LRSchedule(opt), options_(o) {
  check_warmup_decay("LinearWarmupCosine", o, default_lr());
}

double LinearWarmupCosine::lr_at(int64_t step) const {
  check_step("LinearWarmupCosine", step);
  const LinearWarmupCosineOptions& o = options_;
  const double lr = default_lr();
  if (step < o.warmup_steps()) return lr * warmup_fraction(step, o.warmup_steps());
  const double span = double(std::max<int64_t>(1, o.total_steps() - o.warmup_steps()));
  const double q = std::min(1.0, double(step - o.warmup_steps()) / span);  // 0 -> 1 over the decay
  return o.min_lr() + (lr - o.min_lr()) * 0.5 * (1 + std::cos(kPi * q));
}

// ---- LinearWarmupLinearDecay: warmup, then a straight line from lr down to min_lr

LinearWarmupLinearDecay::LinearWarmupLinearDecay(const Optimizer& opt, const LinearWarmupLinearDecayOptions& o)
    : LRSchedule(opt), options_(o) {
  check_warmup_decay("LinearWarmupLinearDecay", o, default_lr());
}

double LinearWarmupLinearDecay::lr_at(int64_t step) const {
  check_step("LinearWarmupLinearDecay", step);
  const LinearWarmupLinearDecayOptions& o = options_;
  const double lr = default_lr();
  if (step < o.warmup_steps()) return lr * warmup_fraction(step, o.warmup_steps());
  const double span = double(std::max<int64_t>(1, o.total_steps() - o.warmup_steps()));
  const double left = std::max(0.0, double(o.total_steps() - step) / span);  // 1 -> 0 over the decay
  return o.min_lr() + (lr - o.min_lr()) * left;
}

// ---- Constant, after an optional linear warmup

Constant::Constant(const Optimizer& opt, const ConstantOptions& o) : LRSchedule(opt), options_(o) {
  check_rate("Constant", "lr", default_lr());
  HEED_CHECK(o.warmup_steps() >= 0, "Constant", "invalid warmup_steps ", o.warmup_steps(),
             " (must be >= 0)");
}

double Constant::lr_at(int64_t step) const {
  check_step("Constant", step);
  return default_lr() * warmup_fraction(step, options_.warmup_steps());
}

// ---- StepDecay: lr * gamma^floor(step / step_size)

StepDecay::StepDecay(const Optimizer& opt, const StepDecayOptions& o) : LRSchedule(opt), options_(o) {
  check_rate("StepDecay", "lr", default_lr());
  HEED_CHECK(o.step_size() > 0, "StepDecay", "invalid step_size ", o.step_size(), " (must be > 0)");
  check_rate("StepDecay", "gamma", o.gamma());
}

double StepDecay::lr_at(int64_t step) const {
  check_step("StepDecay", step);
  if (default_lr() == 0) return 0;  // as PyTorch's lr * gamma per step: 0 stays 0
  const double k = double(step / options_.step_size()), lr = default_lr() * std::pow(options_.gamma(), k);
  // gamma > 1 grows without bound: past the largest double, an error (Python's float ** raises
  // OverflowError in PyTorch's closed form), never an infinite rate
  HEED_CHECK(std::isfinite(lr), "StepDecay", "the rate at step ", step, " overflows: lr ",
             default_lr(), " * gamma ", options_.gamma(), "^", k);
  return lr;
}

}  // namespace heed::optim
