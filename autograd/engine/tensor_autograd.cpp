// tensor_autograd.cpp - Tensor's autograd accessors (core/tensor.h, "autograd"): requires_grad,
// grad, grad_fn, detach and the post-accumulate hook list. They read and write the tensor's
// own autograd state; the backward pass that fills grad() is engine.cpp.
#include <atomic>

#include "../../core/error.h"
#include "grad_mode.h"
#include "node.h"

namespace heed {

int64_t Tensor::register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const {
  HEED_CHECK(is_leaf() && requires_grad(), "register_post_accumulate_grad_hook", "only a leaf "
             "that requires grad accumulates a gradient; this tensor of shape ", shape(),
             is_leaf() ? " does not require grad" : " is not a leaf");
  HEED_CHECK(hook != nullptr, "register_post_accumulate_grad_hook", "the hook is empty (null)");
  static std::atomic<int64_t> next_handle{0};
  const int64_t handle = ++next_handle;
  std::lock_guard<std::mutex> lock(impl_->leaf->mu);
  impl_->leaf->post_accumulate_hooks.emplace_back(handle, std::move(hook));
  return handle;
}

void Tensor::remove_post_accumulate_grad_hook(int64_t handle) const {
  if (!impl_) fail_undefined();
  if (!impl_->leaf) return;
  std::lock_guard<std::mutex> lock(impl_->leaf->mu);
  auto& hooks = impl_->leaf->post_accumulate_hooks;
  for (size_t i = 0; i < hooks.size(); ++i)
    if (hooks[i].first == handle) { hooks.erase(hooks.begin() + i); return; }
}

bool Tensor::requires_grad() const {
  if (!impl_) fail_undefined();
  return impl_->requires_grad();
}
bool Tensor::is_leaf() const {
  if (!impl_) fail_undefined();
  return !impl_->grad_fn;
}
const std::shared_ptr<Node>& Tensor::grad_fn() const {
  if (!impl_) fail_undefined();
  return impl_->grad_fn;
}
const Tensor& Tensor::grad() const {
  static const Tensor none;
  if (!impl_) fail_undefined();
  return impl_->leaf ? impl_->leaf->grad : none;
}

// The gradient itself, as libtorch's mutable_grad(): assigning it is set_grad() without the
// lock (assign while no backward pass runs into this tensor).
Tensor& Tensor::mutable_grad() const {
  if (!impl_) fail_undefined();
  return impl_->leaf_state().grad;
}

Tensor& Tensor::requires_grad_(bool on) {
  if (!impl_) fail_undefined();
  HEED_CHECK(is_leaf(), "requires_grad_", "only a leaf tensor can change requires_grad; "
             "this one was produced by ", impl_->grad_fn->op_name(), " (use detach())");
  if (on || impl_->leaf) impl_->leaf_state().requires_grad = on;
  return *this;
}

void Tensor::zero_grad() const {
  if (!impl_) fail_undefined();
  if (impl_->leaf && impl_->leaf->grad.defined()) {
    NoGradGuard ng;
    GradState& st = *impl_->leaf;
    // A gradient made by backward(create_graph = true) is part of a graph: it is replaced
    // by zeros rather than written (PyTorch's zero_grad sets it to None by default).
    if (st.grad.requires_grad()) st.grad = zeros(st.grad.shape());
    else st.grad.zero_();
  }
}

void Tensor::set_grad(const Tensor& g) const {
  if (!impl_) fail_undefined();
  HEED_CHECK(!g.defined() || g.shape() == shape(), "set_grad", "gradient shape ", g.shape(),
             " does not match tensor shape ", shape());
  // libtorch's later accumulations (+= by backward, zero_) would write through a view into
  // its input; into a view's copy they would write nothing the caller sees (core/tensor.h)
  HEED_CHECK(!g.defined() || !g.impl()->view.op || g.impl()->view.shares, "set_grad",
             "the gradient is a copy made by ", g.impl()->view.op, " (shape ", g.shape(),
             "), not a view: backward's accumulations would not reach its input; pass .clone()");
  if (g.defined() || impl_->leaf) impl_->leaf_state().grad = g;
}

Tensor& Tensor::detach_() {
  if (!impl_) fail_undefined();
  impl_->grad_fn = nullptr;  // the graph stays owned by its other consumers, if any
  if (impl_->leaf) impl_->leaf->requires_grad = false;
  return *this;
}

Tensor Tensor::detach() const {
  if (!impl_) fail_undefined();
  auto impl = std::allocate_shared<TensorImpl>(CachingAllocator<TensorImpl>());
  impl->storage = impl_->storage;
  impl->offset = impl_->offset;
  impl->shape = impl_->shape;
  impl->view = impl_->view;  // a view's detach() is that view still, as libtorch's
  return Tensor(std::move(impl));
}

}  // namespace heed
