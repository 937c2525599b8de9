#include "module.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <map>
#include <typeinfo>
#include <unordered_set>

#include "../autograd/engine/grad_mode.h"
#include "../core/error.h"

namespace heed::nn {

// typeid gives the mangled name (g++ and clang: the Itanium ABI); demangle it, then drop
// the namespaces: "(anonymous namespace)::Seq2Seq" -> "Seq2Seq", "app::Box<int>" -> "Box<int>",
// and a trailing "Impl", the holder's name: "NetImpl" -> "Net".
static std::string class_name(const std::type_info& type) {
  const char* mangled = type.name();
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  const std::string name = status == 0 && demangled ? demangled.get() : mangled;
  const size_t colon = name.rfind("::", name.find('<'));  // the last one before any template args
  std::string out = colon == std::string::npos ? name : name.substr(colon + 2);
  if (out.size() > 4 && out.find('<') == std::string::npos && out.compare(out.size() - 4, 4, "Impl") == 0)
    out.resize(out.size() - 4);
  return out;
}

std::string Module::repr() const { return class_name(typeid(*this)); }

void detail::empty_holder(const std::type_info& impl) {
  fail(class_name(impl).c_str(), "the module holder is empty (constructed from nullptr); assign it "
       "a module first, e.g. fc = register_module(\"fc\", nn::Linear(4, 3))");
}

std::shared_ptr<Module> Module::clone_module() const {
  const std::string name = class_name(typeid(*this));
  fail("clone", name, " does not implement clone(): derive it from nn::Cloneable<", name,
       "Impl> (or override clone_module())");
}

// Same names in the same order, same shapes, tensors defined in the same places.
void Module::check_same_structure(const Module& from, const std::string& prefix) const {
  const std::string who = class_name(typeid(from));
  auto same = [&](const NamedTensors& a, const NamedTensors& b, const char* kind) {
    HEED_CHECK(a.size() == b.size(), "clone", who, " at '", prefix, "': the copy built with the same options has ",
               a.size(), " ", kind, "s, the original ", b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const Tensor &x = a[i].second, &y = b[i].second;
      HEED_CHECK(a[i].first == b[i].first && x.defined() == y.defined() &&
                     (!x.defined() || x.shape() == y.shape()),
                 "clone", who, ": ", kind, " '", prefix, b[i].first,
                 "' of the original differs (name, shape or presence) from the one its constructor "
                 "builds; override clone_module()");
    }
  };
  same(params_, from.params_, "parameter");
  same(buffers_, from.buffers_, "buffer");
  HEED_CHECK(children_.size() == from.children_.size(), "clone", who, " at '", prefix,
             "': the copy built with the same options has ", children_.size(),
             " submodules, the original ", from.children_.size());
  for (size_t i = 0; i < children_.size(); ++i) {
    HEED_CHECK(children_[i].first == from.children_[i].first, "clone", who, ": submodule '", prefix,
               from.children_[i].first, "' differs from the one its constructor builds");
    children_[i].second->check_same_structure(*from.children_[i].second, prefix + children_[i].first + ".");
  }
}

void Module::copy_values_from(const Module& from) {
  for (auto [mine, theirs] : {std::make_pair(&params_, &from.params_), std::make_pair(&buffers_, &from.buffers_)})
    for (size_t i = 0; i < mine->size(); ++i) {
      Tensor t = (*mine)[i].second;
      const Tensor& src = (*theirs)[i].second;
      if (!t.defined()) continue;
      t.copy_(src);
      if (t.requires_grad() != src.requires_grad()) t.requires_grad_(src.requires_grad());
    }
  training_ = from.training_;
  for (size_t i = 0; i < children_.size(); ++i) children_[i].second->copy_values_from(*from.children_[i].second);
}

void Module::copy_state_from(const Module& from) {
  check_same_structure(from, "");
  NoGradGuard no_grad;  // a copy of values, not part of any graph
  copy_values_from(from);
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

// A name is one parameter's, one buffer's or one submodule's, as PyTorch's Module refuses
// an attribute that already exists: two "w" entries in state_dict() could not be loaded.
void Module::check_unused(const char* op, const std::string& name) const {
  HEED_CHECK(!name.empty() && name.find('.') == std::string::npos, op, "name '", name,
             "' must be non-empty and contain no '.'");
  const char* used = param_names_.count(name)    ? "parameter"
                     : buffer_names_.count(name) ? "buffer"
                     : child_names_.count(name)  ? "submodule"
                                                 : nullptr;
  HEED_CHECK(used == nullptr, op, used, " '", name, "' already registered");
}

Tensor Module::register_parameter(const std::string& name, Tensor t, bool requires_grad) {
  check_unused("register_parameter", name);
  if (t.defined()) t.requires_grad_(requires_grad);  // undefined: an absent optional parameter
  params_.emplace_back(name, t);
  param_names_.insert(name);
  return t;
}

Tensor Module::register_buffer(const std::string& name, Tensor t) {
  check_unused("register_buffer", name);
  buffers_.emplace_back(name, t);
  buffer_names_.insert(name);
  return t;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> m) {
  check_unused("register_module", name);
  HEED_CHECK(m != nullptr, "register_module", "module '", name, "' is null");
  children_.emplace_back(name, std::move(m));
  child_names_.insert(name);
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
