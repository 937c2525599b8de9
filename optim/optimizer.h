// optimizer.h - optim::Optimizer: the base of SGD, Adam, AdamW and RMSprop, as torch::optim's.
// Read this file first, then sgd.h, adam.h, rmsprop.h, schedule.h and clip.h; README.md in
// this folder walks through adding an optimizer.
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
// An optimizer is three pieces (the rest of this file is written once for all of them):
//   - its options class, derived from OptimizerCloneableOptions<itself> (clone, get_lr and
//     set_lr come from there) with one HEED_ARG line an option;
//   - its class, derived from OptimizerBase<itself, its options>, which gives it the two
//     constructors (a list of parameters, or of ParamGroups, then the defaults);
//   - four static members the base calls: kName, check(options), slots(options) and
//     update(options, step, param, grad, state), the last a pure function of its arguments.
//
// State (for checkpoints). Every buffer kept per parameter is named
//   "group<g>.param<p>.<slot>"        e.g. "group0.param3.exp_avg"
// with p counting within its group and the slot named as in PyTorch's state dict
// (momentum_buffer, exp_avg, exp_avg_sq, max_exp_avg_sq, square_avg, grad_avg). The buffers
// are allocated, as zeros, when a group is added, so the set of names depends only on the
// groups and their options, never on the history. state() returns them (the live tensors,
// not copies); load_state() checks a saved set against them and copies it in. The groups'
// current lr is not state: a schedule sets it from step_count() (schedule.h).
//
// Copying an optimizer is deleted (its state buffers are tensors: a copy would share them);
// a ParamGroup copies its options, and options are values. Exceptions: step(),
// add_param_group and load_state check everything (every group's options; set_grad already
// checks each gradient's shape) before the first write, so a throwing call leaves the
// parameters, the state and the step count as they were; a throwing constructor leaves
// nothing.
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
#include "../core/error.h"
#include "../core/tensor.h"

namespace heed::optim {

using heed::NamedTensors;  // core/tensor.h: state() and load_state() take and return them

// What every optimizer's options share: the learning rate. Each optimizer's options class
// derives from it (through OptimizerCloneableOptions below), so that a parameter group can
// hold any of them and a schedule can set lr. Each optimizer's constructor takes only its
// own options type; a group holding another's is a heed::Error naming the optimizer when
// it is added.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;

 protected:
  OptimizerOptions() = default;
  OptimizerOptions(const OptimizerOptions&) = default;
  OptimizerOptions& operator=(const OptimizerOptions&) = default;
};

// clone, get_lr and set_lr for an options class `Derived` with a HEED_ARG(double, lr), as
// libtorch's OptimizerCloneableOptions<Derived>:
//   class SGDOptions : public OptimizerCloneableOptions<SGDOptions> { ... HEED_ARG(double, lr); };
template <class Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  double get_lr() const override { return static_cast<const Derived&>(*this).lr(); }
  void set_lr(double lr) override { static_cast<Derived&>(*this).lr(lr); }
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

  virtual const char* name() const = 0;  // "SGD", "Adam", ...: starts every error message

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
  // For the constructor of OptimizerBase: checks the defaults, then adds the groups.
  void init(const std::vector<ParamGroup>& groups);

  // What OptimizerBase forwards to its optimizer's static members (see there).
  virtual void check_options(const OptimizerOptions& options) const = 0;
  virtual std::vector<std::string> slots(const OptimizerOptions& options) const = 0;
  virtual void update(const OptimizerOptions& options, const Tensor& param, const Tensor& grad,
                      std::vector<Tensor>& state) = 0;

 private:
  std::unique_ptr<OptimizerOptions> defaults_;
  std::vector<ParamGroup> groups_;
  std::vector<std::vector<std::string>> slot_names_;     // [group][slot]
  std::vector<std::vector<std::vector<Tensor>>> state_;  // [group][param][slot]
  int64_t step_count_ = 0;
};

// The shell of every optimizer: its two constructors, its name, and the type check of each
// group's options, written once. `Derived` supplies, as public static members:
//
//   static constexpr const char* kName = "SGD";        // starts every error message
//   static void check(const Options& o);               // heed::Error if an option is out of range
//   static std::vector<std::string> slots(const Options& o);  // state slots per parameter, in order
//   static void update(const Options& o, int64_t step, const Tensor& param, const Tensor& grad,
//                      std::vector<Tensor>& state);
//
// update() changes `param` (and `state`, its buffers in the order slots() names them) in
// place from `grad` (same shape), under NoGradGuard; `step` counts this update (1 on the
// first). A derived class takes the constructors with `using OptimizerBase::OptimizerBase;`.
// The defaults are optional where `Options` has a default constructor (Adam's lr 1e-3, as
// libtorch) and required where it has none (SGD's lr).
template <class Derived, class Options>
class OptimizerBase : public Optimizer {
 public:
  using OptionsType = Options;

  OptimizerBase(const std::vector<Tensor>& params, const Options& defaults = Options())
      : OptimizerBase(std::vector<ParamGroup>{ParamGroup(params)}, defaults) {}
  OptimizerBase(const std::vector<ParamGroup>& groups, const Options& defaults = Options())
      : Optimizer(defaults) {
    init(groups);  // calls the overrides below: this class is complete here, Derived's statics too
  }

  const char* name() const override { return Derived::kName; }

 protected:
  void check_options(const OptimizerOptions& options) const override {
    // a group may have been given another optimizer's options (AdamOptions for AdamW)
    const auto* o = dynamic_cast<const Options*>(&options);
    HEED_CHECK(o, Derived::kName, "a param group has the options of another optimizer (use ",
               Derived::kName, "Options)");
    Derived::check(*o);
  }
  std::vector<std::string> slots(const OptimizerOptions& options) const override {
    return Derived::slots(static_cast<const Options&>(options));
  }
  void update(const OptimizerOptions& options, const Tensor& param, const Tensor& grad,
              std::vector<Tensor>& state) override {
    Derived::update(static_cast<const Options&>(options), step_count(), param, grad, state);
  }
};

}  // namespace heed::optim
