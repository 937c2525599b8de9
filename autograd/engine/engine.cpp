// engine.cpp - the backward pass: topological order, gradient routing, leaf accumulation.
//
// Read it top-down: the pass's state (GraphTask, one factory per kind of pass), the entry
// points (Tensor::backward, autograd::grad, detail::gradients_at; engine.h), then run_pass(),
// which is micrograd's backward() (build_topo, then each node's _backward in reverse order)
// with counts instead of a sorted list, then the steps it calls, in the order it calls them:
// counting the consumers, finding autograd::grad's inputs, summing a gradient, running one
// node (and what a create_graph pass, anomaly mode and hooks add around it), routing a
// gradient. Last, the leaves: AccumulateGrad and the post-accumulate hooks.
//
// A pass's state lives in the pass. The graph's Nodes hold only what the graph is (edges,
// backward closure, saved tensors); each Tensor::backward() or autograd::grad() call owns a
// GraphTask (after PyTorch's) with, per node it reached, the count of consumers not yet run
// and the sum of the gradients they sent. So passes never see each other's counts:
//   - concurrent passes: threads may run backward at once over graphs that share nodes,
//     intermediate ones too when each passes retain_graph=true (a pass that frees a graph
//     another is running is the caller's race). A leaf's AccumulateGrad is one node shared
//     by every graph on every thread; it adds into .grad under the leaf's lock.
//   - nested passes: a node's backward may run a pass of its own. The library's do so
//     through detail::gradients_at (gradient checkpointing's re-run, a composed twin): that
//     pass stops at the node's own edges, so it runs nothing of the outer graph, and its
//     gradients leave through the node like any other. A backward a user writes may call
//     backward() itself: that inner pass, with its own GraphTask, runs every node it
//     reaches, adds into .grad at once, and leaves the outer pass's counts and sums as they
//     were. The only state the passes of one thread share is the rule for post-accumulate
//     hooks (HookPass): they wait for the outermost pass.
//   - create_graph: the pass runs with grad mode on, so the heed ops a backward calls are
//     recorded and the gradients it produces are differentiable (node.h). Every sum of
//     gradients is then out of place (pending + g, leaf.grad + g): an in-place add would
//     cut the graph. A node whose backward is not differentiable runs with grad mode off,
//     and its gradients get a DelayedError node (delayed_error.cpp).
//   - autograd::grad: the gradients arriving at the given inputs are taken (captured)
//     instead of accumulated; no leaf's .grad changes and only nodes that lead to an input
//     run.
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "../../core/bf16_cache.h"
#include "../../core/error.h"
#include "../ops/arith.h"
#include "anomaly_mode.h"
#include "delayed_error.h"
#include "engine.h"
#include "node.h"

namespace heed {

using RootList = std::vector<std::shared_ptr<Node>>;

// ---------------------------------------------------------------- one pass's state

// One pass's state (PyTorch's GraphTask): its mode, fixed when the pass starts by the
// factory of its kind; the nodes it reached, densely numbered in the order reached, each
// with its count and sum; and per edge the number of the producer it leads to. A node is
// found by address (`numbers`) once per edge, while counting (step 1); running (steps 2 and
// 3) then goes by number only.
struct GraphTask {
  template <class T>
  using Vec = std::vector<T, CachingAllocator<T>>;
  static constexpr std::uint32_t kNone = ~0u;

  // ---- the kinds of pass, one factory each ----
  // Tensor::backward: every node the roots reach runs; leaves add into .grad. Sized for
  // `hint` nodes (the thread's previous pass: a training loop's passes are alike), so the
  // containers rarely grow while the pass runs.
  static GraphTask backward(std::size_t hint, bool keep_graph, bool create_graph, bool outermost) {
    return GraphTask(hint, keep_graph, create_graph, outermost, /*capturing=*/false,
                     /*allow_unused=*/false, /*stop_at_inputs=*/false, nullptr, nullptr);
  }
  // autograd::grad: the gradients arriving at `inputs` (whose nodes are input_refs) are
  // captured instead of accumulated, and only the nodes that lead to an input run.
  static GraphTask grad(const std::vector<Tensor>& inputs, const RootList& input_refs,
                        bool keep_graph, bool create_graph, bool allow_unused, bool outermost) {
    return GraphTask(0, keep_graph, create_graph, outermost, /*capturing=*/true, allow_unused,
                     /*stop_at_inputs=*/false, &inputs, &input_refs);
  }
  // A backward's own pass (detail::gradients_at): captured at the nodes `at`, which are the
  // enclosing pass's, so they are numbered before step 1 and it neither counts nor runs them
  // or anything beyond them. Records exactly when it keeps the graph.
  static GraphTask nested(const RootList& at, bool create_graph, bool outermost) {
    return GraphTask(0, create_graph, create_graph, outermost, /*capturing=*/true,
                     /*allow_unused=*/true, /*stop_at_inputs=*/true, nullptr, &at);
  }

  // ---- the mode ----
  const bool keep_graph, create_graph, outermost;
  const bool capturing, allow_unused;  // autograd::grad and a backward's own pass
  const bool stop_at_inputs;  // a backward's own pass: the inputs' nodes are not followed
  const std::vector<Tensor>* const inputs;  // for messages; null in a backward's own pass
  const RootList* const input_refs;         // each input's node; null unless capturing

  // ---- the nodes reached ----
  struct PassNode {
    Node* node;
    std::uint32_t deps, first_edge;  // consumers not run yet (kNone: has run); its edges
    Tensor pending;                  // dL/d(output) summed over the consumers run so far
  };
  Vec<PassNode> nodes;
  // create_graph: per node, the edge (or root) that reached it, for Grads::output
  Vec<const std::shared_ptr<Node>*> refs;
  Vec<std::uint32_t> targets;  // per edge of nodes[k], from nodes[k].first_edge; kNone: no grad
  std::unordered_map<const Node*, std::uint32_t, std::hash<const Node*>, std::equal_to<const Node*>,
                     CachingAllocator<std::pair<const Node* const, std::uint32_t>>>
      numbers;                 // node -> its number
  // Capturing: per input, its node's number (kNone: not reached) and gradient; per node,
  // whether it is an input's and whether an input lies beyond it.
  std::vector<std::uint32_t> input_nodes;
  std::vector<Tensor> captured;
  std::vector<char> is_input, leads_to_input;

  // The node's number, and whether this call gave it.
  std::pair<std::uint32_t, bool> number(const std::shared_ptr<Node>& e) {
    const auto [at, added] = numbers.try_emplace(e.get(), static_cast<std::uint32_t>(nodes.size()));
    if (!added) return {at->second, false};
    return add(e);
  }
  // The node's number, for a node no other edge leads to (so none will look it up).
  std::pair<std::uint32_t, bool> add(const std::shared_ptr<Node>& e) {
    nodes.push_back(PassNode{e.get(), 0, 0, Tensor()});
    if (create_graph) refs.push_back(&e);
    return {static_cast<std::uint32_t>(nodes.size() - 1), true};
  }
  // The node's number if step 1 reached it, else kNone. Only for a node the caller holds
  // (autograd::grad's inputs): step 1 then went through number(), not add().
  std::uint32_t find(const Node* n) const {
    const auto at = numbers.find(n);
    return at == numbers.end() ? kNone : at->second;
  }

 private:
  GraphTask(std::size_t hint, bool keep_graph, bool create_graph, bool outermost, bool capturing,
            bool allow_unused, bool stop_at_inputs, const std::vector<Tensor>* inputs,
            const RootList* input_refs)
      : keep_graph(keep_graph), create_graph(create_graph), outermost(outermost),
        capturing(capturing), allow_unused(allow_unused), stop_at_inputs(stop_at_inputs),
        inputs(inputs), input_refs(input_refs), captured(capturing ? input_refs->size() : 0) {
    nodes.reserve(hint);
    targets.reserve(hint);
    numbers.reserve(hint);
    if (stop_at_inputs)
      for (const auto& n : *input_refs) number(n);  // before step 1, so that it does not follow them
  }
};

// The passes running on one thread, nested (a node's backward may run a pass of its own),
// and the leaves whose post-accumulate hooks wait for the outermost (the leaves, at the end).
namespace {
struct HookPass {
  int depth = 0;                // backward passes running on this thread, nested
  std::vector<std::shared_ptr<TensorImpl>> deferred;  // leaves whose hooks wait
};
thread_local HookPass hook_pass;
}  // namespace

// ---------------------------------------------------------------- the steps, declared

namespace {

// The roots of a pass and their seeds: n of each (no vector: a training step's backward
// allocates nothing but tensors and nodes, tests/test_allocator.cpp).
struct Roots {
  const std::shared_ptr<Node>* nodes;
  const Tensor* seeds;
  std::size_t n;
};

// In the order below: what the entry points call, then run_pass() and its steps.
Tensor seed_for(const char* op, const Tensor& y, const Tensor& given, std::size_t i);
void run_backward(GraphTask& task, const Roots& roots);
void run_pass(GraphTask& task, const Roots& roots);
void count_dependencies(GraphTask& task, const Roots& roots);  // step 1
void find_inputs(GraphTask& task);                              // step 1, autograd::grad
void add_gradient(Tensor& pending, Tensor g);                   // steps 2 and 3
void run_node(GraphTask& task, std::uint32_t k, Tensor dy, TensorVec& slots);  // step 3
void check_anomalies(const Node* n, const TensorVec& slots);                   // step 3
Tensor checked(const Node* from, int i, Tensor g, const Node* to);            // step 3
// The leaves' post-accumulate hooks (at the end of the file).
void run_deferred_hooks();
void run_post_accumulate_hooks(const std::shared_ptr<TensorImpl>& leaf);

}  // namespace

// ---------------------------------------------------------------- the entry points

void Tensor::backward(const Tensor& grad, std::optional<bool> retain_graph, bool create_graph) const {
  if (!impl_) fail_undefined();
  const Tensor seed = seed_for("backward", *this, grad, 0);
  const std::shared_ptr<Node> root = detail::producer_of(*this);
  static thread_local std::size_t last_size = 0;  // nodes the thread's last outermost pass reached
  const bool outermost = hook_pass.depth == 0;
  // this pass's state; none is kept in the nodes
  GraphTask task = GraphTask::backward(outermost ? last_size : 0,
                                       retain_graph.value_or(create_graph), create_graph, outermost);
  run_backward(task, Roots{&root, &seed, 1});
  if (outermost) last_size = task.nodes.size();
}

std::vector<Tensor> autograd::grad(const std::vector<Tensor>& outputs,
                                   const std::vector<Tensor>& inputs,
                                   const std::vector<Tensor>& grad_outputs,
                                   std::optional<bool> retain_graph, bool create_graph,
                                   bool allow_unused) {
  constexpr const char* op = "autograd::grad";
  HEED_CHECK(!outputs.empty(), op, "no outputs to differentiate");
  HEED_CHECK(!inputs.empty(), op, "inputs is empty: grad requires non-empty inputs (the "
             "tensors to differentiate with respect to); to accumulate into every leaf's "
             ".grad(), call backward()");
  HEED_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), op, "got ",
             grad_outputs.size(), " grad_outputs for ", outputs.size(), " outputs");
  RootList roots;
  std::vector<Tensor> seeds;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    seeds.push_back(seed_for(op, outputs[i], grad_outputs.empty() ? Tensor() : grad_outputs[i], i));
    roots.push_back(detail::producer_of(outputs[i]));
  }
  RootList input_nodes;  // holds each input's node (a leaf's AccumulateGrad) during the pass
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    HEED_CHECK(inputs[i].defined(), op, "input ", i, " is an undefined tensor");
    HEED_CHECK(inputs[i].requires_grad(), op, "input ", i, " (shape ", inputs[i].shape(),
               ") does not require grad, so it has no gradient");
    input_nodes.push_back(detail::producer_of(inputs[i]));
  }
  GraphTask task = GraphTask::grad(inputs, input_nodes, retain_graph.value_or(create_graph),
                                   create_graph, allow_unused, hook_pass.depth == 0);
  run_backward(task, Roots{roots.data(), seeds.data(), roots.size()});
  return task.captured;
}

std::vector<Tensor> detail::gradients_at(const Tensor& y, const Tensor& dy,
                                         const std::vector<std::shared_ptr<Node>>& at,
                                         bool create_graph) {
  RootList nodes;  // the distinct nodes of `at`; where[i]: at[i]'s place among them
  std::vector<int> where(at.size(), -1);
  for (std::size_t i = 0; i < at.size(); ++i)
    if (at[i] && std::find(nodes.begin(), nodes.end(), at[i]) == nodes.end()) {
      where[i] = static_cast<int>(nodes.size());  // a later entry for the same node gets none
      nodes.push_back(at[i]);
    }
  std::vector<Tensor> out(at.size());
  if (!y.defined() || !y.requires_grad() || nodes.empty()) return out;
  const std::shared_ptr<Node> root = producer_of(y);
  GraphTask task = GraphTask::nested(nodes, create_graph, hook_pass.depth == 0);
  run_backward(task, Roots{&root, &dy, 1});
  for (std::size_t i = 0; i < at.size(); ++i)
    if (where[i] >= 0) out[i] = std::move(task.captured[where[i]]);
  return out;
}

void detail::gradients_to_edges(const Tensor& y, const Tensor& dy, Grads& g) {
  std::vector<std::shared_ptr<Node>> edges(g.size());
  for (int i = 0; i < g.size(); ++i) edges[i] = g.edge(i);
  std::vector<Tensor> d = gradients_at(y, dy, edges, g.create_graph());
  for (int i = 0; i < g.size(); ++i)
    if (g.needs(i)) g[i] = d[i].defined() ? std::move(d[i]) : zeros(edges[i]->out_shape);
}

// ---------------------------------------------------------------- the pass, step by step

namespace {

// The seed for one output: dL/dy given, or 1 for a one-element y.
Tensor seed_for(const char* op, const Tensor& y, const Tensor& given, std::size_t i) {
  HEED_CHECK(y.defined(), op, "output ", i, " is an undefined tensor");
  HEED_CHECK(y.requires_grad(), op, "output ", i, " (shape ", y.shape(), ") does not require "
             "grad (no input of its graph has requires_grad set)");
  if (!given.defined()) {
    HEED_CHECK(y.numel() == 1, op, "a gradient can be created implicitly only for a "
               "one-element output; pass dL/dy for output ", i, " of shape ", y.shape());
    return ones(y.shape());
  }
  HEED_CHECK(given.shape() == y.shape(), op, "gradient shape ", given.shape(),
             " does not match output ", i, " shape ", y.shape());
  return given;
}

// This pass on the thread's stack of passes (post-accumulate hooks, HookPass); after the
// outermost one, or an exception, nothing is left behind.
struct PassDepth {
  PassDepth() { ++hook_pass.depth; }
  ~PassDepth() {
    if (--hook_pass.depth > 0) return;
    hook_pass.deferred.clear();
  }
};

// A pass from the roots with their seeds, with grad mode on exactly when it creates a
// graph; hooks deferred by nested passes run at the end of the outermost.
// Under "medium" each parameter is rounded to bfloat16 once for the whole pass
// (core/bf16_cache.h), however many of its nodes read it.
void run_backward(GraphTask& task, const Roots& roots) {
  AutoGradMode mode(task.create_graph);  // off: backward functions computed, not recorded
  Bf16CacheScope keep_bf16_copies;
  PassDepth depth;
  run_pass(task, roots);
  if (task.outermost) run_deferred_hooks();
}

// The backward pass, as micrograd's backward() reads:
//     topo = build_topo(self); self.grad = 1
//     for v in reversed(topo): v._backward()
// with counts instead of a sorted list (Kahn's algorithm): a node runs once every consumer
// has sent its gradient, so each node runs once, after everything that uses its output.
void run_pass(GraphTask& task, const Roots& roots) {
  // 1. Find every node reachable from the roots; deps = its consumers in this graph.
  count_dependencies(task, roots);
  if (task.capturing) find_inputs(task);

  // 2. The roots start with the initial gradients, dL/dL = 1 (or the caller's gradients).
  std::vector<std::uint32_t, CachingAllocator<std::uint32_t>> ready;  // deps 0: can run
  for (std::size_t i = 0; i < roots.n; ++i) {
    const std::uint32_t k = task.number(roots.nodes[i]).first;
    add_gradient(task.nodes[k].pending, roots.seeds[i]);
    if (task.nodes[k].deps == 0 && std::find(ready.begin(), ready.end(), k) == ready.end())
      ready.push_back(k);
  }

  // 3. Run each ready node's backward, then send each input's gradient to the node that
  //    produced that input; the producer is ready when its last consumer has sent.
  TensorVec slots;  // reused by every node: cleared after routing, so resize() refills it
  while (!ready.empty()) {
    const std::uint32_t k = ready.back();
    ready.pop_back();
    Node* n = task.nodes[k].node;
    // an input's node in a backward's own pass: captured, neither run nor followed
    const bool stop = task.stop_at_inputs && task.is_input[k];
    const int m = stop ? 0 : static_cast<int>(n->next.size());
    slots.resize(m);
    run_node(task, k, std::move(task.nodes[k].pending), slots);
    const std::uint32_t* targets = task.targets.data() + task.nodes[k].first_edge;
    for (int i = 0; i < m; ++i) {
      if (targets[i] == GraphTask::kNone) continue;
      GraphTask::PassNode& to = task.nodes[targets[i]];
      if (slots[i].defined()) add_gradient(to.pending, checked(n, i, std::move(slots[i]), to.node));
      if (--to.deps == 0) ready.push_back(targets[i]);
    }
    slots.clear();
  }
}

// Step 1: number every node reachable from the roots and count its consumers (deps).
void count_dependencies(GraphTask& task, const Roots& roots) {
  std::vector<std::uint32_t, CachingAllocator<std::uint32_t>> stack;
  for (std::size_t i = 0; i < roots.n; ++i)
    if (const auto [k, added] = task.number(roots.nodes[i]); added) stack.push_back(k);
  while (!stack.empty()) {
    const std::uint32_t k = stack.back();
    stack.pop_back();
    Node* n = task.nodes[k].node;
    task.nodes[k].first_edge = static_cast<std::uint32_t>(task.targets.size());
    for (auto& e : n->next) {
      if (!e) {
        task.targets.push_back(GraphTask::kNone);
        continue;
      }
      // An edge that is its node's only owner is its only consumer, in any graph: the node
      // is new to this pass (a chain of ops whose outputs are gone needs no look-up).
      const auto [to, added] = e.use_count() == 1 ? task.add(e) : task.number(e);
      task.targets.push_back(to);
      task.nodes[to].deps++;
      if (added) stack.push_back(to);
    }
  }
}

// autograd::grad, after step 1: each input's node number (an input the pass does not reach
// is an error unless allow_unused), and which nodes to run: those an input's node lies
// beyond. The nodes are numbered parents first along each path, so the sweeps from the last
// number settle in a round or two.
void find_inputs(GraphTask& task) {
  const std::size_t n = task.nodes.size();
  task.is_input.assign(n, 0);
  for (std::size_t i = 0; i < task.input_refs->size(); ++i) {
    const std::uint32_t k = task.find((*task.input_refs)[i].get());
    HEED_CHECK(k != GraphTask::kNone || task.allow_unused, "autograd::grad", "input ", i,
               " (shape ", (*task.inputs)[i].shape(), ") was not used in the graph of the "
               "outputs; pass allow_unused=true to get an undefined gradient for it");
    task.input_nodes.push_back(k);
    if (k != GraphTask::kNone) task.is_input[k] = 1;
  }
  task.leads_to_input.assign(n, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t k = n; k-- > 0;) {
      if (task.leads_to_input[k] || (task.stop_at_inputs && task.is_input[k])) continue;
      const std::uint32_t* t = task.targets.data() + task.nodes[k].first_edge;
      for (std::size_t i = 0; i < task.nodes[k].node->next.size(); ++i)
        if (t[i] != GraphTask::kNone && (task.is_input[t[i]] || task.leads_to_input[t[i]])) {
          task.leads_to_input[k] = changed = true;
          break;
        }
    }
  }
}

// pending += g, the sum of a node's consumers' gradients. In place when no one else holds
// pending's buffer (no other tensor, view or saved closure) and neither is part of a graph:
// then the sum is the engine's own, e.g. a weight used at every step of a recurrence
// gathers its T gradients into one buffer instead of allocating T - 1 sums. Otherwise (the
// first gradient may be another node's saved tensor, or the seed; under create_graph they
// are differentiable) a new tensor, recorded when grad mode is on.
// A gradient the engine holds alone is its own buffer, whatever op made it (a transpose's
// backward gives a transpose's copy): its view mark is dropped, so adds into it are allowed.
void add_gradient(Tensor& pending, Tensor g) {
  if (!pending.defined()) {
    pending = std::move(g);
    if (sole_gradient(pending)) pending.impl()->view = ViewMark{};
  } else if (sole_gradient(pending) && !g.requires_grad()) {
    pending.impl()->view = ViewMark{};
    pending.add_(g);
  } else {
    pending = pending + g;
  }
}

// Step 3's body: node k's backward, dy -> slots[i] = dL/d(input i), with what goes around it.
void run_node(GraphTask& task, std::uint32_t k, Tensor dy, TensorVec& slots) {
  GraphTask::PassNode& p = task.nodes[k];
  Node* n = p.node;
  p.deps = GraphTask::kNone;  // has run
  if (task.capturing) {  // autograd::grad: take the gradients of the inputs, run only what leads to one
    if (task.is_input[k]) {
      if (!dy.defined()) dy = zeros(n->out_shape);
      for (std::size_t i = 0; i < task.input_nodes.size(); ++i)
        if (task.input_nodes[i] == k) task.captured[i] = dy;
    }
    if (!task.leads_to_input[k]) return;
  }
  if (!dy.defined()) dy = zeros(n->out_shape);  // every consumer's gradient was zero
  const std::uint32_t* targets = task.targets.data() + p.first_edge;
  Grads g(n->next, slots, task, targets, task.create_graph ? task.refs[k] : nullptr,
          task.create_graph);
  if (task.create_graph && !n->double_backward) {
    {
      NoGradGuard first_order;  // its backward's gradients are not differentiable ...
      n->apply(dy, g);
    }
    detail::mark_not_differentiable(*n, dy, slots);  // ... and say so if differentiated
  } else {
    n->apply(dy, g);
  }
  if (!task.keep_graph) n->release();
  if (AnomalyMode::enabled()) check_anomalies(n, slots);
}

// Anomaly mode: every gradient a backward produced is checked for NaN and Inf.
void check_anomalies(const Node* n, const TensorVec& slots) {
  for (std::size_t i = 0; i < slots.size(); ++i)
    if (slots[i].defined())
      detail::check_backward_anomaly(n->op_name(), n->anomaly_index, static_cast<int>(i), slots[i]);
}

// A gradient for input i of `from`, routed to the node that produced the input.
Tensor checked(const Node* from, int i, Tensor g, const Node* to) {
  HEED_CHECK(g.shape() == to->out_shape, from->op_name(), "backward produced a gradient of shape ",
             g.shape(), " for input ", i, " of shape ", to->out_shape);
  return g;
}

}  // namespace

// ---------------------------------------------------------------- what a backward writes

// The gradients a node's backward fills (node.h), with the running sums of this pass.
Grads::Out Grads::write_or_add(int i, const Shape& shape) {
  if (!needs(i)) return {nullptr, 0};
  if (!task_ || create_graph_) return {write(i, shape), 0};  // create_graph: every sum recorded
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

Tensor Grads::output(const Tensor& y) const {
  if (!create_graph_ || !self_) return y;
  auto impl = std::allocate_shared<TensorImpl>(CachingAllocator<TensorImpl>());
  impl->storage = y.impl()->storage;
  impl->offset = y.impl()->offset;
  impl->shape = y.shape();
  impl->view = y.impl()->view;
  impl->grad_fn = *self_;  // y again, as the output of the node being run
  return Tensor(std::move(impl));
}

// ---------------------------------------------------------------- leaves

// A leaf's post-accumulate hooks run once per backward pass, with the pass's final gradient.
// A nested backward() (above) adds into the .grad() of leaves the outer pass may also reach
// directly. So inside a nested pass a leaf's hooks are deferred (once per leaf); the
// outermost pass runs them when it runs the leaf's own node, or else at its end.
namespace {
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
    for (const auto& leaf : leaves) call_hooks(leaf);
  }
}

void run_post_accumulate_hooks(const std::shared_ptr<TensorImpl>& leaf) {
  HookPass& p = hook_pass;
  if (p.depth <= 1) {  // the outermost pass: its final gradient, and no second call at its end
    p.deferred.erase(std::remove(p.deferred.begin(), p.deferred.end(), leaf), p.deferred.end());
    return call_hooks(leaf);
  }
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
// leaf.grad must not change. Under create_graph the gradient is part of a graph: leaf.grad
// becomes clone(dy), then leaf.grad + dy, both recorded (PyTorch's AccumulateGrad does the
// same). That graph reaches the leaf's own AccumulateGrad, which holds the leaf: a cycle
// that set_grad(Tensor()) breaks (PyTorch warns of the same one; autograd::grad has none).
void AccumulateGrad::apply(const Tensor& grad_out, Grads& g) {
  GradState& st = *leaf->leaf;
  bool hooked;
  {
    std::lock_guard<std::mutex> lock(st.mu);  // other threads' passes add into grad too
    hooked = !st.post_accumulate_hooks.empty();
    if (g.create_graph()) {
      st.grad = st.grad.defined() ? st.grad + grad_out : clone(grad_out);
    } else if (!st.grad.defined()) {
      if (sole_gradient(grad_out)) {
        grad_out.impl()->view = ViewMark{};  // the engine's own buffer now, whatever op made it
        st.grad = grad_out;
      } else {
        Tensor copy = empty(grad_out.shape());
        copy.copy_(grad_out);
        st.grad = copy;
      }
    } else if (st.grad.requires_grad()) {  // left by a create_graph pass: not written in place
      NoGradGuard no_grad;
      st.grad = st.grad.detach() + grad_out;
    } else {
      st.grad.add_(grad_out);
    }
  }
  if (hooked) run_post_accumulate_hooks(leaf);
}

}  // namespace heed
