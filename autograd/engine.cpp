// engine.cpp - the backward pass: topological order, gradient routing, leaf accumulation.
//
// A pass's state lives in the pass. The graph's Nodes hold only what the graph is (edges,
// backward closure, saved tensors); each Tensor::backward() call owns a GraphTask (after
// PyTorch's) with, per node it reached, the count of consumers not yet run and the sum of
// the gradients they sent. So passes never see each other's counts:
//   - concurrent passes: threads may run backward at once over graphs that share nodes,
//     intermediate ones too when each passes retain_graph=true (a pass that frees a graph
//     another is running is the caller's race). A leaf's AccumulateGrad is one node shared
//     by every graph on every thread; it adds into .grad under the leaf's lock.
//   - nested passes: a node's backward may itself call backward() (gradient checkpointing,
//     recompute.cpp; such a node sets Node::calls_backward). The inner pass is a pass like
//     any other, with its own GraphTask: it runs every node it reaches, including ones the
//     outer pass has yet to run (a parameter's AccumulateGrad, an intermediate node shared
//     with the outer graph), adds into .grad at once, and leaves the outer pass's counts
//     and sums as they were. The only state the passes of one thread share is the rule for
//     post-accumulate hooks (HookPass below): they wait for the outermost pass.
#include <algorithm>
#include <vector>

#include "../core/error.h"
#include "anomaly_mode.h"
#include "arith.h"
#include "node.h"

namespace heed {

// ---------------------------------------------------------------- leaves

// A leaf's post-accumulate hooks run once per backward pass, with the pass's final gradient.
// A nested pass (above) adds into the .grad() of parameters its block captured, leaves the
// outer pass may also reach directly, before or after that node. So inside a nested pass,
// and while the outermost pass on this thread still has a calls_backward node to run, a
// leaf's hooks are deferred (once per leaf); the outermost pass runs them as soon as its
// last such node has run, or at its end.
namespace {
struct HookPass {
  int depth = 0;                // backward passes running on this thread, nested
  int backward_calls_left = 0;  // the outermost pass's calls_backward nodes not yet run
  std::vector<std::shared_ptr<TensorImpl>> deferred;  // leaves whose hooks wait
  const GraphTask* outermost = nullptr;                // the outermost pass's state
};
thread_local HookPass hook_pass;
bool accumulates_later(const GraphTask& task, const TensorImpl* leaf);  // below

bool has_hooks(GradState& st) {
  std::lock_guard<std::mutex> lock(st.mu);  // another thread may be registering one
  return !st.post_accumulate_hooks.empty();
}

void call_hooks(const std::shared_ptr<TensorImpl>& leaf) {
  GradState& st = *leaf->leaf;
  std::unique_lock<std::mutex> lock(st.mu);
  const auto hooks = st.post_accumulate_hooks;  // a copy, run unlocked: a hook may remove itself
  lock.unlock();
  const Tensor self(leaf);
  for (const auto& [handle, hook] : hooks) hook(self);
}

void run_deferred_hooks() {
  while (!hook_pass.deferred.empty()) {  // a hook's own backward may defer more
    std::vector<std::shared_ptr<TensorImpl>> leaves;
    leaves.swap(hook_pass.deferred);
    for (const auto& leaf : leaves)  // a leaf the outermost pass has yet to reach waits for it
      if (!accumulates_later(*hook_pass.outermost, leaf.get())) call_hooks(leaf);
  }
}

void run_post_accumulate_hooks(const std::shared_ptr<TensorImpl>& leaf) {
  HookPass& p = hook_pass;
  if (p.depth <= 1 && p.backward_calls_left == 0) return call_hooks(leaf);
  for (const auto& l : p.deferred)
    if (l == leaf) return;
  p.deferred.push_back(leaf);
}
}  // namespace

// leaf.grad += dL/dleaf
// The engine runs this once per backward pass, after summing every consumer's gradient, so
// the post-accumulate hooks see this pass's final contribution. The first gradient becomes
// leaf.grad itself when no one else holds its buffer (the engine's reference is the only
// one: no other tensor, view or saved closure), as PyTorch does; otherwise it is copied, as
// dy may be another node's saved tensor or the caller's seed, which a later add_ into
// leaf.grad must not change.
void AccumulateGrad::apply(const Tensor& grad_out, Grads&) {
  GradState& st = *leaf->leaf;
  bool hooked;
  {
    std::lock_guard<std::mutex> lock(st.mu);  // other threads' passes add into grad too
    hooked = !st.post_accumulate_hooks.empty();
    if (!st.grad.defined()) {
      if (sole_gradient(grad_out)) {
        st.grad = grad_out;
      } else {
        Tensor g = empty(grad_out.shape());
        g.copy_(grad_out);
        st.grad = g;
      }
    } else {
      st.grad.add_(grad_out);
    }
  }
  if (hooked) run_post_accumulate_hooks(leaf);
}

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
Tensor Tensor::grad() const {
  if (!impl_) fail_undefined();
  return impl_->leaf ? impl_->leaf->grad : Tensor();
}

Tensor& Tensor::requires_grad_(bool on) {
  if (!impl_) fail_undefined();
  HEED_CHECK(is_leaf(), "requires_grad_", "only a leaf tensor can change requires_grad; "
             "this one was produced by ", impl_->grad_fn->name(), " (use detach())");
  if (on || impl_->leaf) impl_->leaf_state().requires_grad = on;
  return *this;
}

void Tensor::zero_grad() const {
  if (!impl_) fail_undefined();
  if (impl_->leaf && impl_->leaf->grad.defined()) {
    NoGradGuard ng;
    impl_->leaf->grad.zero_();
  }
}

void Tensor::set_grad(const Tensor& g) const {
  if (!impl_) fail_undefined();
  HEED_CHECK(!g.defined() || g.shape() == shape(), "set_grad", "gradient shape ", g.shape(),
             " does not match tensor shape ", shape());
  if (g.defined() || impl_->leaf) impl_->leaf_state().grad = g;
}

Tensor Tensor::detach() const {
  if (!impl_) fail_undefined();
  auto impl = std::allocate_shared<TensorImpl>(CachingAllocator<TensorImpl>());
  impl->storage = impl_->storage;
  impl->shape = impl_->shape;
  return Tensor(std::move(impl));
}

// ---------------------------------------------------------------- backward

// One backward() call's state (PyTorch's GraphTask): the nodes it reached, densely
// numbered in the order reached, each with its count and sum, and per edge the number of the
// producer it leads to. A node is found by address once per edge, while counting (step 1);
// running (step 2) then goes by number only.
struct GraphTask {
  template <class T>
  using Vec = std::vector<T, CachingAllocator<T>>;
  static constexpr std::uint32_t kNone = ~0u;
  struct PassNode {
    Node* node;
    std::uint32_t deps, first_edge;  // consumers not run yet; its edges' producers in targets
    Tensor pending;                  // dL/d(output) summed over the consumers run so far
  };
  Vec<PassNode> nodes;
  Vec<std::uint32_t> targets;  // per edge of nodes[k], from nodes[k].first_edge; kNone: no grad
  Vec<std::uint32_t> table;  // numbers, by address; kNone: free
  Vec<std::uint32_t> hooked;  // outermost pass: its AccumulateGrads of leaves with hooks

  // Sized for `hint` nodes (the thread's previous pass: a training loop's passes are alike),
  // so the arrays rarely grow while the pass runs.
  explicit GraphTask(std::size_t hint) : table(table_size(hint), kNone) {
    nodes.reserve(hint);
    targets.reserve(hint);
  }
  static std::size_t table_size(std::size_t nodes) {  // a power of two, over twice nodes
    std::size_t n = 256;
    while (n <= 2 * nodes) n *= 2;
    return n;
  }

  // n's number, and whether this call gave it. Open addressing with linear probing, the
  // table at most half full. The slot is the address over 64: nodes come from the caching
  // allocator in 64-byte blocks, and a chain's nodes, made one after another, then fill
  // neighbouring slots, so the table is walked nearly in order.
  std::pair<std::uint32_t, bool> number(Node* n) {
    if (2 * nodes.size() >= table.size()) grow();
    for (std::size_t h = slot_of(n);; h = (h + 1) & (table.size() - 1)) {
      const std::uint32_t k = table[h];
      if (k == kNone) {
        table[h] = static_cast<std::uint32_t>(nodes.size());
        return add(n);
      }
      if (nodes[k].node == n) return {k, false};
    }
  }
  // n's number, for a node no other edge leads to (so none will look it up).
  std::pair<std::uint32_t, bool> add(Node* n) {
    nodes.push_back(PassNode{n, 0, 0, Tensor()});
    return {static_cast<std::uint32_t>(nodes.size() - 1), true};
  }
  std::size_t slot_of(const Node* n) const {
    return (reinterpret_cast<std::uintptr_t>(n) >> 6) & (table.size() - 1);
  }
  void grow() {
    table.assign(table_size(nodes.size()), kNone);  // add() may have outgrown one doubling
    for (std::uint32_t k = 0; k < nodes.size(); ++k) {
      std::size_t h = slot_of(nodes[k].node);
      while (table[h] != kNone) h = (h + 1) & (table.size() - 1);
      table[h] = k;
    }
  }
};

namespace {
// True when the pass has yet to run the leaf's AccumulateGrad (a node that has run has its
// deps set to kNone).
bool accumulates_later(const GraphTask& task, const TensorImpl* leaf) {
  for (std::uint32_t k : task.hooked)
    if (static_cast<const AccumulateGrad*>(task.nodes[k].node)->leaf.get() == leaf)
      return task.nodes[k].deps != GraphTask::kNone;
  return false;
}
}  // namespace

Grads::Out Grads::write_or_add(int i, const Shape& shape) {
  if (!needs(i)) return {nullptr, 0};
  if (!task_) return {write(i, shape), 0};
  Tensor& sum = task_->nodes[targets_[i]].pending;
  if (!AnomalyMode::enabled() && sum.defined() && sum.shape() == shape && sole_gradient(sum))
    return {sum.data(), 1};
  return {write(i, shape), 0};
}

real* Grads::write(int i, const Shape& shape) {
  if (!needs(i)) return nullptr;
  slots_[i] = empty(shape);
  return slots_[i].data();
}

// pending += g, the sum of a node's consumers' gradients. In place when no one else holds
// pending's buffer (no other tensor, view or saved closure): then the sum is the engine's
// own, e.g. a weight used at every step of a recurrence gathers its T gradients into one
// buffer instead of allocating T - 1 sums. Otherwise (the first gradient may be another
// node's saved tensor, or the seed) a new tensor. The same floats either way.
static void accumulate_pending(Tensor& pending, Tensor g) {
  if (!pending.defined()) {
    pending = std::move(g);
    return;
  }
  if (sole_gradient(pending)) {
    pending.add_(g);
  } else {
    pending = pending + g;
  }
}

void Tensor::backward(const Tensor& grad, bool retain_graph) const {
  if (!impl_) fail_undefined();
  HEED_CHECK(requires_grad(), "backward", "tensor of shape ", shape(),
             " does not require grad (no input of its graph has requires_grad set)");
  Tensor seed = grad;
  if (!seed.defined()) {
    HEED_CHECK(numel() == 1, "backward", "a gradient can be created implicitly only for a "
               "one-element output; pass dL/dy for shape ", shape());
    seed = ones(shape());
  }
  HEED_CHECK(seed.shape() == shape(), "backward", "gradient shape ", seed.shape(),
             " does not match output shape ", shape());

  NoGradGuard no_grad;  // backward functions are computed, not recorded
  struct Depth {  // this pass on the thread's stack of passes (post-accumulate hooks, above)
    Depth() { ++hook_pass.depth; }
    ~Depth() {
      if (--hook_pass.depth > 0) return;
      hook_pass.backward_calls_left = 0;  // after an exception: leave nothing behind
      hook_pass.deferred.clear();
      hook_pass.outermost = nullptr;
    }
  } depth;
  const bool outermost = hook_pass.depth == 1;
  std::shared_ptr<Node> root = detail::producer_of(*this);
  static thread_local std::size_t last_size = 0;  // nodes the thread's last outermost pass reached
  GraphTask task(outermost ? last_size : 0);  // this pass's state; none is kept in the nodes
  if (outermost) hook_pass.outermost = &task;
  std::vector<std::uint32_t, CachingAllocator<std::uint32_t>> stack;  // numbers of nodes

  // 1. Number every node reachable from the root and count its consumers (deps).
  stack.push_back(task.number(root.get()).first);
  while (!stack.empty()) {
    const std::uint32_t k = stack.back();
    stack.pop_back();
    Node* n = task.nodes[k].node;
    if (outermost && n->calls_backward) ++hook_pass.backward_calls_left;
    if (outermost && n->next.size() == 0)  // a leaf's node, or a checkpoint of no inputs
      if (auto* acc = dynamic_cast<AccumulateGrad*>(n))
        if (has_hooks(*acc->leaf->leaf)) task.hooked.push_back(k);
    task.nodes[k].first_edge = static_cast<std::uint32_t>(task.targets.size());
    for (auto& e : n->next) {
      if (!e) {
        task.targets.push_back(GraphTask::kNone);
        continue;
      }
      // An edge that is its node's only owner is its only consumer, in any graph: the node
      // is new to this pass (a chain of ops whose outputs are gone needs no look-up).
      const auto [to, added] = e.use_count() == 1 ? task.add(e.get()) : task.number(e.get());
      task.targets.push_back(to);
      task.nodes[to].deps++;
      if (added) stack.push_back(to);
    }
  }

  // 2. Run each node once all its consumers have sent their gradients (Kahn's order),
  //    then pass each input's gradient on to that input's producer. Every reached node
  //    runs exactly once (its deps reach 0 when its last consumer has run).
  task.nodes[0].pending = seed;
  stack.push_back(0);
  TensorVec slots;  // reused by every node: cleared after routing, so resize() refills it
  while (!stack.empty()) {
    GraphTask::PassNode& p = task.nodes[stack.back()];
    stack.pop_back();
    Node* n = p.node;
    Tensor dy = std::move(p.pending);
    if (!dy.defined()) dy = zeros(n->out_shape);  // every consumer's gradient was zero
    const int m = static_cast<int>(n->next.size());
    const std::uint32_t* targets = task.targets.data() + p.first_edge;
    slots.resize(m);
    Grads g(n->next, slots, task, targets);
    n->apply(dy, g);
    p.deps = GraphTask::kNone;  // has run (accumulates_later)
    if (outermost && n->calls_backward && --hook_pass.backward_calls_left == 0)
      run_deferred_hooks();
    if (!retain_graph) n->release();
    if (AnomalyMode::enabled())
      for (int i = 0; i < m; ++i)
        if (slots[i].defined())
          detail::check_backward_anomaly(n->name(), n->anomaly_index, i, slots[i]);
    for (int i = 0; i < m; ++i) {
      if (targets[i] == GraphTask::kNone) continue;
      GraphTask::PassNode& e = task.nodes[targets[i]];
      if (slots[i].defined()) {
        HEED_CHECK(slots[i].shape() == e.node->out_shape, n->name(), "backward produced a "
                   "gradient of shape ", slots[i].shape(), " for input ", i, " of shape ",
                   e.node->out_shape);
        accumulate_pending(e.pending, std::move(slots[i]));
      }
      if (--e.deps == 0) stack.push_back(targets[i]);
    }
    slots.clear();
  }
  if (!outermost) return;
  last_size = task.nodes.size();
  run_deferred_hooks();
}

}  // namespace heed
