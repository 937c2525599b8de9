#include "module.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <map>
#include <typeinfo>
#include <unordered_set>

#include "../autograd/grad_mode.h"
#include "../core/error.h"

namespace heed::nn {

// typeid gives the mangled name (g++ and clang: the Itanium ABI); demangle it, then drop
// the namespaces: "(anonymous namespace)::Seq2Seq" -> "Seq2Seq", "app::Box<int>" -> "Box<int>".
std::string Module::repr() const {
  const char* mangled = typeid(*this).name();
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  const std::string name = status == 0 && demangled ? demangled.get() : mangled;
  const size_t colon = name.rfind("::", name.find('<'));  // the last one before any template args
  return colon == std::string::npos ? name : name.substr(colon + 2);
}

// Keeps the first name of each tensor: a tensor registered twice (tied weights) is one
// parameter to an optimizer, to clipping and to a checkpoint.
static NamedTensors first_of_each_tensor(const NamedTensors& all) {
  NamedTensors out;
  std::unordered_set<const void*> seen;
  for (const auto& [n, t] : all)
    if (!t.defined() || seen.insert(t.impl()).second) out.emplace_back(n, t);
  return out;
}

static void check_name(const char* what, const std::string& name) {
  HEED_CHECK(!name.empty() && name.find('.') == std::string::npos, what, "name '", name,
             "' must be non-empty and contain no '.'");
}

Tensor Module::register_parameter(const std::string& name, Tensor t, bool requires_grad) {
  check_name("register_parameter", name);
  for (auto& [n, p] : params_)
    HEED_CHECK(n != name, "register_parameter", "parameter '", name, "' already registered");
  if (t.defined()) t.requires_grad_(requires_grad);  // undefined: an absent optional parameter
  params_.emplace_back(name, t);
  return t;
}

Tensor Module::register_buffer(const std::string& name, Tensor t) {
  check_name("register_buffer", name);
  buffers_.emplace_back(name, t);
  return t;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> m) {
  check_name("register_module", name);
  HEED_CHECK(m != nullptr, "register_module", "module '", name, "' is null");
  for (auto& [n, c] : children_)
    HEED_CHECK(n != name, "register_module", "submodule '", name, "' already registered");
  children_.emplace_back(name, std::move(m));
}

void Module::collect(const std::string& prefix, bool recurse, bool buffers, NamedTensors& out) const {
  for (auto& [n, t] : buffers ? buffers_ : params_)
    if (t.defined()) out.emplace_back(prefix + n, t);  // an absent optional one is skipped
  if (!recurse) return;
  for (auto& [n, c] : children_) c->collect(prefix + n + ".", true, buffers, out);
}

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors all;
  collect("", recurse, false, all);
  return first_of_each_tensor(all);
}

NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors out;
  collect("", recurse, true, out);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [n, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (auto& [name, t] : named_parameters()) n += t.numel();
  return n;
}

void Module::state_dict_into(const std::string& prefix, NamedTensors& out) const {
  for (const NamedTensors* own : {&params_, &buffers_})
    for (const auto& [n, t] : *own)
      if (t.defined()) out.emplace_back(prefix + n, t);
  for (const auto& [n, c] : children_) c->state_dict_into(prefix + n + ".", out);
}

NamedTensors Module::state_dict() const {
  NamedTensors out;
  state_dict_into("", out);
  return out;
}

static std::string key_list(const std::vector<std::string>& keys) {
  std::string s;
  for (const std::string& k : keys) s += (s.empty() ? "'" : ", '") + k + "'";
  return s;
}

IncompatibleKeys Module::load_state_dict(const NamedTensors& dict, bool strict) {
  const char* op = "load_state_dict";
  std::map<std::string, const Tensor*> given;
  for (const auto& [n, t] : dict) {
    HEED_CHECK(given.emplace(n, &t).second, op, "the state dict has key '", n, "' twice");
    HEED_CHECK(t.defined(), op, "the state dict's tensor '", n, "' is undefined");
  }
  IncompatibleKeys r;
  const NamedTensors ours = state_dict();
  std::map<std::string, bool> in_model;
  for (const auto& [n, t] : ours) {
    in_model[n] = true;
    const auto it = given.find(n);
    if (it == given.end()) {
      r.missing_keys.push_back(n);
      continue;
    }
    HEED_CHECK(it->second->shape() == t.shape(), op, "size mismatch for '", n, "': copying a tensor of shape ",
               it->second->shape(), " from the state dict, the shape in the model is ", t.shape());
  }
  for (const auto& [n, t] : dict)
    if (!in_model.count(n)) r.unexpected_keys.push_back(n);
  if (strict && !r.empty())
    fail(op, "the state dict does not match the model: missing keys [", key_list(r.missing_keys),
         "], unexpected keys [", key_list(r.unexpected_keys), "]");
  NoGradGuard no_grad;  // parameters require grad; this copy is not part of any graph
  for (const auto& [n, t] : ours) {
    const auto it = given.find(n);
    if (it != given.end()) Tensor(t).copy_(*it->second);
  }
  return r;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, c] : children_) c->train(on);
}

void Module::zero_grad(bool set_to_none) {
  for (auto& [n, t] : named_parameters()) {
    if (set_to_none) t.set_grad(Tensor());
    else t.zero_grad();
  }
}

void Module::summary_into(const std::string& name, int depth, std::string& out) const {
  int64_t own = 0;
  for (auto& [n, t] : params_) own += t.defined() ? t.numel() : 0;
  out += std::string(2 * depth, ' ') + (name.empty() ? "" : "(" + name + "): ") + repr();
  if (own) out += "  [" + std::to_string(own) + " params]";
  out += "\n";
  for (auto& [n, c] : children_) c->summary_into(n, depth + 1, out);
}

std::string Module::summary() const {
  std::string out;
  summary_into("", 0, out);
  out += "total parameters: " + std::to_string(num_parameters()) + "\n";
  return out;
}

}  // namespace heed::nn
