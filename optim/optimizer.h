// optimizer.h - optim::Optimizer: the base of SGD, Adam and AdamW, as torch::optim's.
// Read this file first, then sgd.h, adam.h, schedule.h and clip.h.
//
// An optimizer holds parameter groups. Each group has its own options (its learning rate,
// weight decay, ...); a group built without options takes the optimizer's defaults:
//
//   optim::Adam opt(model->parameters(), optim::AdamOptions(1e-3));
//   optim::AdamW opt({optim::ParamGroup(weights),                               // defaults
//                     optim::ParamGroup(biases, optim::AdamWOptions(1e-3).weight_decay(0))},
//                    optim::AdamWOptions(1e-3));
//   for (...) { opt.zero_grad(); loss.backward(); opt.step(); }
//
// step() updates every parameter that has a gradient and skips the others, as PyTorch
// does. The update runs under NoGradGuard, so it is never recorded.
//
// State (for checkpoints). Every buffer kept per parameter is named
//   "group<g>.param<p>.<slot>"        e.g. "group0.param3.exp_avg"
// with p counting within its group and the slot named as in PyTorch's state dict
// (momentum_buffer, exp_avg, exp_avg_sq, max_exp_avg_sq). The buffers are allocated, as
// zeros, when a group is added, so the set of names depends only on the groups and their
// options, never on the history. state() returns them (the live tensors, not copies);
// load_state() checks a saved set against them and copies it in. The groups' current lr
// is not state: a schedule sets it from step_count() (schedule.h).
//
// Copying an optimizer is deleted (its state buffers are tensors: a copy would share them);
// a ParamGroup copies its options. Exceptions: step(), add_param_group and load_state check
// everything (every group's options; set_grad already checks each gradient's shape) before
// the first write, so a throwing call leaves the parameters, the state and the step count
// as they were.
//
// One step counter serves every parameter (PyTorch keeps one per parameter). The two
// agree unless a parameter has no gradient at some step: PyTorch then does not advance
// that parameter's Adam bias correction, and starts its SGD momentum buffer (b = d, which
// differs from b = (1 - dampening) * d only when dampening != 0) at its first gradient,
// where heed uses the optimizer's step number for both.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../core/arg.h"
#include "../core/tensor.h"

namespace heed::optim {

using heed::NamedTensors;  // core/tensor.h: state() and load_state() take and return them

// What every optimizer's options share: the learning rate. SGDOptions, AdamOptions and
// AdamWOptions derive from it, so that a parameter group can hold any of them and a
// schedule can set lr. Each optimizer's constructor takes only its own options type; a
// group holding another's is a heed::Error naming the optimizer when it is added.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;  // each derived class's HEED_ARG(double, lr)
  virtual void set_lr(double lr) = 0;

 protected:
  OptimizerOptions() = default;
  OptimizerOptions(const OptimizerOptions&) = default;
  OptimizerOptions& operator=(const OptimizerOptions&) = default;
};

// Parameters that share options. Copying a group copies its options.
struct ParamGroup {
  explicit ParamGroup(std::vector<Tensor> params);                   // the optimizer's defaults
  ParamGroup(std::vector<Tensor> params, const OptimizerOptions& options);  // checked on add
  ParamGroup(const ParamGroup& other);
  ParamGroup& operator=(const ParamGroup& other);
  ParamGroup(ParamGroup&&) = default;
  ParamGroup& operator=(ParamGroup&&) = default;

  double lr() const { return options->get_lr(); }
  void set_lr(double lr) { options->set_lr(lr); }  // what schedules call

  std::vector<Tensor> params;
  std::unique_ptr<OptimizerOptions> options;  // null until the optimizer fills in its defaults
  double initial_lr = 0;  // lr when the group was added (schedules scale groups by it)
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  virtual const char* name() const = 0;  // "SGD", "Adam", "AdamW": starts every error message

  // One update of every parameter that has a gradient; counts the step first.
  void step();
  // Drop every parameter's gradient (set_to_none, PyTorch's default), or zero it in place.
  void zero_grad(bool set_to_none = true);

  // Checks the group's options and parameters (defined leaves, each in one group only)
  // and allocates its state.
  void add_param_group(const ParamGroup& group);
  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  const OptimizerOptions& defaults() const { return *defaults_; }

  // ---- state, for checkpoints ----
  int64_t step_count() const { return step_count_; }  // steps taken (0 before the first)
  NamedTensors state() const;                          // every state buffer, by name
  // Copies `state` into the buffers and sets the step count. The names must be exactly
  // those state() returns, each once, with the same shapes; otherwise a heed::Error names
  // the first offending tensor and nothing is changed.
  void load_state(const NamedTensors& state, int64_t step_count);

 protected:
  explicit Optimizer(const OptimizerOptions& defaults) : defaults_(defaults.clone()) {}
  // For the subclass constructor: checks the defaults, then adds the groups.
  void init(const std::vector<ParamGroup>& groups);

  // Throws a heed::Error if `options` are not this optimizer's or are out of range.
  virtual void check_options(const OptimizerOptions& options) const = 0;
  // The state slots each parameter of a group with these options keeps, in order.
  virtual std::vector<std::string> slots(const OptimizerOptions& options) const = 0;
  // Updates one parameter in place from its gradient (same shape). `state` holds its
  // buffers in the order slots() names them. Runs under NoGradGuard, after step_count()
  // has counted this step (1 on the first).
  virtual void update(const OptimizerOptions& options, const Tensor& param, const Tensor& grad,
                      std::vector<Tensor>& state) = 0;

 private:
  std::unique_ptr<OptimizerOptions> defaults_;
  std::vector<ParamGroup> groups_;
  std::vector<std::vector<std::string>> slot_names_;     // [group][slot]
  std::vector<std::vector<std::vector<Tensor>>> state_;  // [group][param][slot]
  int64_t step_count_ = 0;
};

}  // namespace heed::optim
