// function.cpp - AutogradContext, SavedValue and the node of a custom Function (function.h).
#include "function.h"

#include "../ops/shape.h"
#include "../ops/views.h"

namespace heed {
namespace autograd {

namespace {
constexpr const char* kOp = "autograd::Function";
}

void SavedValue::fail_kind(const char* wanted) const {
  static const char* const names[] = {"nothing", "a double", "an int", "a bool", "a tensor",
                                      "a string", "an int list"};
  fail(kOp, "saved_data holds ", names[kind_], ", read as ", wanted);
}

double SavedValue::toDouble() const {
  if (kind_ == kInt) return double(i_);
  if (kind_ != kDouble) fail_kind("a double");
  return d_;
}
int64_t SavedValue::toInt() const {
  if (kind_ != kInt) fail_kind("an int");
  return i_;
}
bool SavedValue::toBool() const {
  if (kind_ != kBool) fail_kind("a bool");
  return i_ != 0;
}
Tensor SavedValue::toTensor() const {
  if (kind_ != kTensor) fail_kind("a tensor");
  return t_;
}
const std::string& SavedValue::toStringRef() const {
  if (kind_ != kString) fail_kind("a string");
  return s_;
}
const std::vector<int64_t>& SavedValue::toIntVector() const {
  if (kind_ != kIntList) fail_kind("an int list");
  return l_;
}

void AutogradContext::save_for_backward(std::vector<Tensor> to_save) {
  saved_.clear();
  saved_.reserve(to_save.size());
  for (const Tensor& t : to_save) saved_.emplace_back(t);
  saved_is_output_.assign(saved_.size(), 0);
}

std::vector<Tensor> AutogradContext::get_saved_variables() const {
  std::vector<Tensor> out;
  for (size_t i = 0; i < saved_.size(); ++i) {
    saved_[i].check(kOp);
    out.push_back(saved_is_output_[i] && grads_ ? grads_->output(saved_[i]) : Tensor(saved_[i]));
  }
  return out;
}

void AutogradContext::mark_non_differentiable(const std::vector<Tensor>& outputs) {
  for (const Tensor& t : outputs)
    if (t.defined()) non_differentiable_.push_back(t.impl());
}

bool AutogradContext::needs_input_grad(int i) const {
  HEED_CHECK(grads_ != nullptr, kOp, "needs_input_grad is only known during backward");
  HEED_CHECK(i >= 0 && i < n_args_, kOp, "needs_input_grad(", i, "): forward took ", n_args_,
             " arguments, numbered 0 to ", n_args_ - 1);
  for (size_t k = 0; k < arg_of_input_.size(); ++k)
    if (arg_of_input_[k] == i) return grads_->needs(static_cast<int>(k));
  return false;  // not a tensor argument
}

// T::backward's gradients r, one per argument of forward, into g (the node's inputs are the
// tensor arguments). As libtorch: extra gradients past the last argument are fine when
// undefined (forward's defaulted arguments, e.g. a bias left out); a defined gradient for
// an argument that is not a tensor is an error, as it would be dropped.
void AutogradContext::hand_out(std::vector<Tensor> r, Grads& g) const {
  const int n_args = n_args_;
  bool extra_undefined = true;
  for (size_t i = n_args; i < r.size(); ++i) extra_undefined = extra_undefined && !r[i].defined();
  if (static_cast<int>(r.size()) > n_args && extra_undefined) r.resize(n_args);
  HEED_CHECK(static_cast<int>(r.size()) == n_args, kOp, "backward returned ", r.size(),
             " gradients; expected ", n_args, ", one per argument of forward (an undefined "
             "Tensor for an argument with none)");
  std::vector<char> is_tensor(n_args, 0);
  for (int arg : arg_of_input_) is_tensor[arg] = 1;
  for (int i = 0; i < n_args; ++i)
    HEED_CHECK(is_tensor[i] || !r[i].defined(), kOp, "backward returned a defined gradient (shape ",
               r[i].shape(), ") for argument ", i, " of forward, which is not a tensor; return an "
               "undefined Tensor() there");
  for (int k = 0; k < g.size(); ++k)
    if (g.needs(k) && r[arg_of_input_[k]].defined()) g[k] = r[arg_of_input_[k]];
}

// A saved tensor that is the output itself would make the node own itself (output -> node
// -> context -> output): it is held detached, and handed back as the node's output.
void AutogradContext::adopt_output(const Tensor& out) {
  for (size_t i = 0; i < saved_.size(); ++i) {
    if (!saved_[i].defined() || saved_[i].impl() != out.impl()) continue;
    saved_[i].~SavedTensor();
    new (&saved_[i]) SavedTensor(out.detach());
    saved_is_output_[i] = 1;
  }
}

void detail::record_function(const std::shared_ptr<AutogradContext>& ctx, const Tensor& out,
                             const std::vector<Tensor>& inputs, int n_args,
                             std::vector<Tensor> (*backward)(AutogradContext*, std::vector<Tensor>)) {
  for (TensorImpl* t : ctx->non_differentiable_)
    if (t == out.impl()) return;  // mark_non_differentiable: no node
  bool any = false;
  if (GradMode::enabled())
    for (const Tensor& t : inputs) any = any || (t.defined() && t.requires_grad());
  if (!any) return;
  ctx->adopt_output(out);
  ctx->n_args_ = n_args;
  auto fn = [ctx, backward](const Tensor& dy, Grads& g) {
    struct During {  // ctx->grads_ set while T::backward runs, cleared even if it throws
      AutogradContext& c;
      ~During() { c.grads_ = nullptr; }
    } during{*ctx};
    ctx->grads_ = &g;
    ctx->hand_out(backward(ctx.get(), {dy}), g);
  };
  connect(heed::detail::make_node(kOp, std::move(fn), true, inputs.data(), static_cast<int>(inputs.size())),
          out, inputs.data(), static_cast<int>(inputs.size()));
}

// Several outputs: one node over a packed tensor [out_0 | out_1 | ...] (flattened), each
// output a recorded view of it (narrow, reshape), so that T::backward receives the gradient
// of every output at once, split back from the packed gradient (zeros where an output was
// not used). A saved output is read back without its graph here.
std::vector<Tensor> detail::record_function_list(
    const std::shared_ptr<AutogradContext>& ctx, const std::vector<Tensor>& outs,
    const std::vector<Tensor>& inputs, int n_args,
    std::vector<Tensor> (*backward)(AutogradContext*, std::vector<Tensor>)) {
  std::vector<Shape> shapes;
  int64_t total = 0;
  for (const Tensor& o : outs) {
    HEED_CHECK(o.defined(), kOp, "forward returned an undefined tensor in its list");
    shapes.push_back(o.shape());
    total += o.numel();
  }
  bool any = false;
  if (GradMode::enabled())
    for (const Tensor& t : inputs) any = any || (t.defined() && t.requires_grad());
  if (!any) return outs;
  Tensor packed = empty({total});
  int64_t at = 0;
  for (const Tensor& o : outs) {
    std::copy(o.data(), o.data() + o.numel(), packed.data() + at);
    at += o.numel();
  }
  ctx->n_args_ = n_args;
  auto fn = [ctx, backward, shapes](const Tensor& dy, Grads& g) {
    struct During {
      AutogradContext& c;
      ~During() { c.grads_ = nullptr; }
    } during{*ctx};
    ctx->grads_ = &g;
    std::vector<Tensor> grad_outputs;  // dy split back into one gradient per output
    int64_t off = 0;
    for (const Shape& s : shapes) {
      grad_outputs.push_back(reshape(narrow(dy, 0, off, s.numel()), s));
      off += s.numel();
    }
    ctx->hand_out(backward(ctx.get(), grad_outputs), g);
  };
  connect(heed::detail::make_node(kOp, std::move(fn), true, inputs.data(), static_cast<int>(inputs.size())),
          packed, inputs.data(), static_cast<int>(inputs.size()));
  std::vector<Tensor> result;
  at = 0;
  for (size_t i = 0; i < outs.size(); ++i) {
    bool differentiable = true;
    for (TensorImpl* t : ctx->non_differentiable_) differentiable = differentiable && t != outs[i].impl();
    Tensor o = reshape(narrow(packed, 0, at, shapes[i].numel()), shapes[i]);
    result.push_back(differentiable ? o : o.detach());
    at += shapes[i].numel();
  }
  return result;
}

}  // namespace autograd
}  // namespace heed
