// schedule.h - learning-rate schedules, computed in closed form from the step number.
//
// A schedule takes the optimizer, as PyTorch's LR schedulers do, and reads at construction
// the optimizer's default lr (the peak of the warmup-decay schedules) and each group's
// initial_lr (the lr it was added with) as that group's base:
//
//   optim::AdamW opt(model->parameters(), optim::AdamWOptions(3e-4));
//   optim::LinearWarmupCosine schedule(opt, optim::WarmupDecayOptions(1000, 100000).min_lr(3e-5));
//   for (...) {
//     schedule.apply(opt, opt.step_count());   // every group's lr for this update
//     opt.zero_grad(); loss.backward(); opt.step();
//   }
//
// lr_at(step) is the learning rate of update number `step` for a group built with the
// default lr, counting the first update as step 0: pass the optimizer's step_count()
// before calling step(). It depends on nothing but `step`, so a run resumed from a
// checkpoint at step k gets exactly the rates an unbroken run would (initial_lr, not the
// lr a checkpoint restored, is the base). In PyTorch terms lr_at(k) is the rate after k
// calls of scheduler.step() in the usual loop (optimizer.step(); scheduler.step()).
//
// apply() gives a group built with the default lr exactly lr_at(step), and a group built
// with its own lr the same multiple of it: lr_g = lr_at(step) * base_g / default_lr
// (PyTorch's LambdaLR likewise scales each group's initial lr; min_lr scales with it). A
// default lr of 0 gives no ratio: every group then gets lr_at(step).
//
// The schedules (s = step, lr = the optimizer's default lr):
//   TransformerWarmup        scale * d_model^-0.5 * min(n^-0.5, n * warmup^-1.5), n = s + 1
//                            (Vaswani et al. 2017, sec. 5.3; steps counted from 1, so the
//                            first update is n = 1 and the peak is at n = warmup; the rate
//                            is the paper's, whatever lr is)
//   LinearWarmupCosine       lr * s / warmup while s < warmup, then
//                            min_lr + (lr - min_lr) * (1 + cos(pi * q)) / 2,
//                            q = (s - warmup) / (total - warmup), held at min_lr after total
//   LinearWarmupLinearDecay  lr * s / warmup while s < warmup, then
//                            min_lr + (lr - min_lr) * max(0, (total - s) / (total - warmup))
//                            (with min_lr 0: HuggingFace get_linear_schedule_with_warmup)
//   Constant                 lr, after an optional linear warmup lr * s / warmup
//   StepDecay                lr * gamma^floor(s / step_size)   (torch.optim.lr_scheduler.StepLR)
// A warmup of 0 steps is none; the divisions use max(1, ...) as HuggingFace's do.
// Every schedule is defined for every step in [0, INT64_MAX] (computed in double, no int64
// overflow); rates, scales and gamma must be finite and >= 0; a StepDecay rate that outgrows
// the largest double (gamma > 1) is a heed::Error naming the step.
// Copying: a schedule is a value (its options and the lrs it read; it keeps no reference to
// the optimizer), a copy is independent. lr_at and apply throw before any group's lr is set;
// apply refuses an optimizer with another number of groups than the one it read.
#pragma once
#include <cstdint>
#include <vector>

#include "optimizer.h"

namespace heed::optim {

class LRSchedule {
 public:
  virtual ~LRSchedule() = default;
  virtual double lr_at(int64_t step) const = 0;  // heed::Error for step < 0
  void apply(Optimizer& opt, int64_t step) const;
  double default_lr() const { return default_lr_; }                  // read at construction
  const std::vector<double>& base_lrs() const { return base_lrs_; }  // each group's initial_lr

 protected:
  explicit LRSchedule(const Optimizer& opt);

 private:
  double default_lr_;
  std::vector<double> base_lrs_;
};

// ---- options ----

class TransformerWarmupOptions {
 public:
  TransformerWarmupOptions(int64_t d_model, int64_t warmup_steps)
      : d_model_(d_model), warmup_steps_(warmup_steps) {}
  HEED_ARG(int64_t, d_model);
  HEED_ARG(int64_t, warmup_steps);
  HEED_ARG(double, scale) = 1;
};

// Shared by the two warmup-then-decay schedules (the peak lr is the optimizer's).
class WarmupDecayOptions {
 public:
  WarmupDecayOptions(int64_t warmup_steps, int64_t total_steps)
      : warmup_steps_(warmup_steps), total_steps_(total_steps) {}
  HEED_ARG(int64_t, warmup_steps);
  HEED_ARG(int64_t, total_steps);
  HEED_ARG(double, min_lr) = 0;  // the rate after total_steps
};
using LinearWarmupCosineOptions = WarmupDecayOptions;
using LinearWarmupLinearDecayOptions = WarmupDecayOptions;

class ConstantOptions {
 public:
  HEED_ARG(int64_t, warmup_steps) = 0;
};

class StepDecayOptions {
 public:
  explicit StepDecayOptions(int64_t step_size) : step_size_(step_size) {}
  HEED_ARG(int64_t, step_size);
  HEED_ARG(double, gamma) = 0.1;
};

// ---- schedules (each checks its options when built: heed::Error naming the bad one) ----

class TransformerWarmup : public LRSchedule {
 public:
  TransformerWarmup(const Optimizer& opt, const TransformerWarmupOptions& options);
  double lr_at(int64_t step) const override;
  const TransformerWarmupOptions& options() const { return options_; }

 private:
  TransformerWarmupOptions options_;
};

class LinearWarmupCosine : public LRSchedule {
 public:
  LinearWarmupCosine(const Optimizer& opt, const LinearWarmupCosineOptions& options);
  double lr_at(int64_t step) const override;
  const LinearWarmupCosineOptions& options() const { return options_; }

 private:
  LinearWarmupCosineOptions options_;
};

class LinearWarmupLinearDecay : public LRSchedule {
 public:
  LinearWarmupLinearDecay(const Optimizer& opt, const LinearWarmupLinearDecayOptions& options);
  double lr_at(int64_t step) const override;
  const LinearWarmupLinearDecayOptions& options() const { return options_; }

 private:
  LinearWarmupLinearDecayOptions options_;
};

class Constant : public LRSchedule {
 public:
  explicit Constant(const Optimizer& opt, const ConstantOptions& options = ConstantOptions());
  double lr_at(int64_t step) const override;
  const ConstantOptions& options() const { return options_; }

 private:
  ConstantOptions options_;
};

class StepDecay : public LRSchedule {
 public:
  StepDecay(const Optimizer& opt, const StepDecayOptions& options);
  double lr_at(int64_t step) const override;
  const StepDecayOptions& options() const { return options_; }

 private:
  StepDecayOptions options_;
};

}  // namespace heed::optim
