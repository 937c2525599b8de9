// optimizer.cpp - parameter groups, the step loop, and the named state of optim::Optimizer.
#include "optimizer.h"

#include <algorithm>
#include <map>

#include "../autograd/engine/grad_mode.h"
#include "../core/error.h"

namespace heed::optim {

// ---------------------------------------------------------------- ParamGroup

ParamGroup::ParamGroup(std::vector<Tensor> params) : params(std::move(params)) {}

ParamGroup::ParamGroup(std::vector<Tensor> params, const OptimizerOptions& options)
    : params(std::move(params)), options(options.clone()) {}

ParamGroup::ParamGroup(const ParamGroup& other)
    : params(other.params),
      options(other.options ? other.options->clone() : nullptr),
      initial_lr(other.initial_lr) {}

ParamGroup& ParamGroup::operator=(const ParamGroup& other) {
  if (this != &other) *this = ParamGroup(other);  // copy, then move-assign
  return *this;
}

// ---------------------------------------------------------------- groups

void Optimizer::init(const std::vector<ParamGroup>& groups) {
  check_options(*defaults_);
  HEED_CHECK(!groups.empty(), name(), "got no parameter groups");
  for (const ParamGroup& g : groups) add_param_group(g);
}

void Optimizer::add_param_group(const ParamGroup& group) {
  const size_t gi = groups_.size();
  ParamGroup g(group);
  // An undefined tensor is an absent optional parameter (a Linear without bias): skipped.
  const auto absent = [](const Tensor& t) { return !t.defined(); };
  g.params.erase(std::remove_if(g.params.begin(), g.params.end(), absent), g.params.end());
  HEED_CHECK(!g.params.empty(), name(), "param group ", gi, " has an empty parameter list");
  if (!g.options) g.options = defaults_->clone();
  check_options(*g.options);
  for (size_t p = 0; p < g.params.size(); ++p) {
    const Tensor& t = g.params[p];
    HEED_CHECK(t.is_leaf(), name(), "param group ", gi, " parameter ", p, " of shape ", t.shape(),
               " is not a leaf (an optimizer can only update leaves)");
    for (size_t h = 0; h <= gi; ++h) {
      const std::vector<Tensor>& others = h < gi ? groups_[h].params : g.params;
      const size_t end = h < gi ? others.size() : p;
      for (size_t q = 0; q < end; ++q)
        HEED_CHECK(others[q].impl() != t.impl(), name(), "param group ", gi, " parameter ", p,
                   " is already group ", h, " parameter ", q, " (each parameter may appear once)");
    }
  }
  g.initial_lr = g.lr();

  std::vector<std::string> slot_names = slots(*g.options);
  std::vector<std::vector<Tensor>> buffers;
  for (const Tensor& t : g.params) {
    std::vector<Tensor> per_param;
    for (size_t s = 0; s < slot_names.size(); ++s) per_param.push_back(zeros(t.shape()));
    buffers.push_back(std::move(per_param));
  }
  groups_.push_back(std::move(g));
  slot_names_.push_back(std::move(slot_names));
  state_.push_back(std::move(buffers));
}

// ---------------------------------------------------------------- step

void Optimizer::step() {
  for (size_t g = 0; g < groups_.size(); ++g) {
    check_options(*groups_[g].options);  // lr and the rest may have been set since
    HEED_CHECK(slots(*groups_[g].options) == slot_names_[g], name(), "param group ", g,
               ": its options were changed so that it needs other state (momentum or amsgrad "
               "switched after the group was added); build a new optimizer instead");
  }
  NoGradGuard no_grad;
  ++step_count_;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const ParamGroup& group = groups_[g];
    for (size_t p = 0; p < group.params.size(); ++p) {
      const Tensor grad = group.params[p].grad();
      if (!grad.defined()) continue;  // no gradient: skipped, as in PyTorch
      update(*group.options, group.params[p], grad, state_[g][p]);
    }
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  for (const ParamGroup& group : groups_)
    for (const Tensor& p : group.params) {
      if (set_to_none) p.set_grad(Tensor());
      else p.zero_grad();
    }
}

// ---------------------------------------------------------------- state

static std::string state_name(size_t g, size_t p, const std::string& slot) {
  return "group" + std::to_string(g) + ".param" + std::to_string(p) + "." + slot;
}

NamedTensors Optimizer::state() const {
  NamedTensors out;
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t p = 0; p < groups_[g].params.size(); ++p)
      for (size_t s = 0; s < slot_names_[g].size(); ++s)
        out.emplace_back(state_name(g, p, slot_names_[g][s]), state_[g][p][s]);
  return out;
}

void Optimizer::load_state(const NamedTensors& saved, int64_t step_count) {
  const std::string op = std::string(name()) + ".load_state";
  HEED_CHECK(step_count >= 0, op.c_str(), "step count ", step_count, " is negative");
  const NamedTensors ours = state();
  std::map<std::string, Tensor> expected(ours.begin(), ours.end());  // name -> our buffer
  const std::string keeps = ours.empty() ? "keeps no state"
      : "keeps " + std::to_string(ours.size()) + " state tensors named like '" + ours[0].first + "'";

  // Check everything first, so that a bad state changes nothing.
  std::map<std::string, const Tensor*> given;
  for (const auto& [n, t] : saved) {
    auto it = expected.find(n);
    HEED_CHECK(it != expected.end(), op.c_str(), "unexpected state tensor '", n, "' (this ", name(),
               " ", keeps, ")");
    HEED_CHECK(given.emplace(n, &t).second, op.c_str(), "state tensor '", n, "' appears twice");
    HEED_CHECK(t.defined(), op.c_str(), "state tensor '", n, "' is undefined");
    HEED_CHECK(t.shape() == it->second.shape(), op.c_str(), "state tensor '", n, "' has shape ",
               t.shape(), " but its parameter has shape ", it->second.shape());
  }
  for (const auto& [n, t] : expected)
    HEED_CHECK(given.count(n), op.c_str(), "state tensor '", n, "' is missing");

  for (auto& [n, t] : expected) t.copy_(*given.at(n));
  step_count_ = step_count;
}

}  // namespace heed::optim
