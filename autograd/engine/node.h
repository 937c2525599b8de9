// node.h - the autograd graph: one Node per recorded op, and record() that adds one
// (node.cpp connects a node to its inputs' producers; engine.cpp runs the graph backward).
// In this file: struct Node, the leaves' AccumulateGrad, Grads (what a backward fills),
// SavedTensor (what it reads, version-checked), FunctionNode (a recorded op's node), and
// record() with its helpers; NodeList, the edges' small vector, is node_list.h.
//
// How reverse mode works here (after micrograd's build_topo and PyTorch's Node/Edge):
//   forward   each op computes its output, then record() attaches a Node to it holding
//             a backward function and one edge per input: the Node that produced that
//             input (or, for a leaf, the AccumulateGrad node that adds into leaf.grad).
//   backward  Tensor::backward() visits the Nodes reachable from the loss in topological
//             order, hands each its output gradient dL/dy, and its backward function
//             returns dL/dx for each input, which is summed into the producer's gradient.
//
// Ownership (no cycles, so reference counting frees everything):
//   output tensor --owns--> its Node --owns--> input producers' Nodes --> ...
//   A Node never owns its output. A backward closure may capture its inputs (they are
//   producers), but captures its own output only as y.detach() (same storage, no grad_fn).
//   A leaf holds its AccumulateGrad weakly; the AccumulateGrad holds the leaf strongly.
//
// Saved state is explicit: a backward closure captures exactly what it reads, and is
// destroyed after backward (unless retain_graph), freeing those tensors. A tensor the user
// could write in place meanwhile (an input, the output, a mask) is captured as a SavedTensor,
// whose version the engine checks before the node's backward runs (below).
// Unneeded gradients are skipped: `g.needs(i)` is false when input i needs no grad.
//
// Higher-order gradients (backward(..., create_graph = true), autograd::grad): the pass then
// records the graph of its own computation, so the gradients it produces can be
// differentiated again. An op whose backward supports this is recorded with
// kDoubleBackward, and its backward, when g.create_graph(), builds its gradients from
// recorded heed ops on its saved inputs (and on g.output(y) for a saved output):
//
//   record("tanh", y, {x}, kDoubleBackward, [y = SavedTensor(y.detach())](const Tensor& dy, Grads& g) {
//     if (g.create_graph()) { Tensor t = g.output(y); g[0] = dy * (1 - t * t); return; }
//     g[0] = ... the fast kernel, as before ...
//
// Any other op (a fused kernel) still runs its first-order backward under create_graph, with
// grad mode off; its gradients are then marked so that differentiating through them raises
// heed::Error naming the op (engine.cpp, DelayedError), never a silent zero.
#pragma once
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/allocator.h"
#include "../../core/tensor.h"
#include "grad_mode.h"
#include "node_list.h"

namespace heed {

class Grads;       // below: what a backward function fills
class SavedTensor;  // below: what it reads
class InputRef;    // below: an op's inputs as record() takes them
struct GraphTask;  // one backward pass's state: counts and gradient sums per node (engine.cpp)

// libtorch's name of the node of heed op `op`, as grad_fn()->name() prints it: "add" ->
// "AddBackward0", "reshape" -> "ViewBackward0" (the table in node_names.cpp, one place).
std::string libtorch_node_name(const char* op);

struct Node {
  virtual ~Node();
  // heed's short name of the op ("add", "mul", "mean"): what errors, anomaly messages and
  // to_dot show, and what record()/named() were given.
  virtual const char* op_name() const = 0;
  // libtorch's name ("AddBackward0", "MulBackward0", "MeanBackward0"), as a ported
  // program's grad_fn()->name() expects.
  std::string name() const { return libtorch_node_name(op_name()); }
  // Given dL/d(output), fill dL/d(input i) for each i with g.needs(i).
  virtual void apply(const Tensor& grad_out, Grads& g) = 0;
  virtual void release() {}  // free saved tensors once backward no longer needs them
  virtual void rename(const char*) {}  // FunctionNode: name it after a composed op (named())

  NodeList next;    // producer of each input's gradient; null where no grad is needed
  Shape out_shape;  // shape of the output, to check the gradients the engine routes here
  // 32 bits keep a recorded op's node, with its closure and the shared_ptr's control
  // block, in three 64-byte blocks (tests/test_allocator.cpp).
  std::uint32_t anomaly_index = 0;  // creation index #k while anomaly mode is on (anomaly_mode.h)
  // apply() builds differentiable gradients under create_graph (recorded with kDoubleBackward)
  bool double_backward = false;
  SavedTensor* saved_tensors = nullptr;  // what the backward closure saved, linked by next_
  // A backward pass's counts and sums live in that pass (GraphTask, engine.cpp), not here:
  // passes on several threads, or one nested in another, may run through the same nodes.
};

// The node at the end of every path: adds the gradient into a leaf's .grad().
// Under create_graph: leaf.grad = leaf.grad + g, recorded (out of place, as PyTorch).
struct AccumulateGrad final : Node {
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf) : leaf(std::move(leaf)) {
    double_backward = true;
  }
  const char* op_name() const override { return "AccumulateGrad"; }
  void apply(const Tensor& grad_out, Grads& g) override;
  std::shared_ptr<TensorImpl> leaf;
};

using TensorVec = std::vector<Tensor, CachingAllocator<Tensor>>;

// The gradients a backward function fills: g[i] = dL/d(input i), where g.needs(i).
class Grads {
 public:
  // In a backward pass: targets[i] is input i's producer's place in it (GraphTask::nodes).
  // self: the node being run, held by the edge that reached it.
  Grads(const NodeList& next, TensorVec& slots, GraphTask& task, const std::uint32_t* targets,
        const std::shared_ptr<Node>* self, bool create_graph)
      : next_(next), slots_(slots), task_(&task), targets_(targets), self_(self),
        create_graph_(create_graph) {}
  // Outside one (a node's apply() called by hand): no running sums to add into.
  Grads(const NodeList& next, TensorVec& slots) : next_(next), slots_(slots) {}
  bool needs(int i) const { return next_[i] != nullptr; }
  // The node input i's gradient goes to (null when it needs none): gradients_to_edges.
  const std::shared_ptr<Node>& edge(int i) const { return next_[i]; }
  Tensor& operator[](int i) { return slots_[i]; }
  // g[i] = a new tensor of `shape` for the kernel to write; its data, or null when input i
  // needs no gradient.
  real* write(int i, const Shape& shape);
  // Input i's gradient of `shape` for a kernel that writes (beta = 0) or adds (beta = 1),
  // e.g. dW = dy^T x as gemm(..., beta, data): one line for both cases. {null, 0} when
  // input i needs no gradient. {running sum, 1}, to ADD into, when the engine alone holds
  // the sum of the gradients input i's producer has received so far and it has `shape`: a
  // weight used at every step of a decoder so gets its gradients summed by gemms with
  // beta = 1 into one buffer (no new buffer, zero fill or separate add per step). Else
  // {write(i, shape), 0}: no gradient has arrived yet, the sum is also held elsewhere (the
  // seed, a saved tensor, a view), anomaly mode is on (it checks each g[i]), or there is no
  // pass (the second constructor). (An added sum is rounded in a different order than the
  // engine's add, so its last bits differ from a run with anomaly mode on.)
  struct Out {
    real* data;
    real beta;
  };
  Out write_or_add(int i, const Shape& shape);
  int size() const { return static_cast<int>(next_.size()); }

  // True when the pass records the graph of the gradients (create_graph): a backward that
  // supports double backward then computes its gradients from recorded heed ops.
  bool create_graph() const { return create_graph_; }
  // A saved output (y.detach()) as the op's output again: under create_graph a tensor over
  // the same storage whose grad_fn is this node, so that a gradient computed from it is
  // differentiable through y (PyTorch's SavedVariable does the same for a saved output);
  // otherwise y itself.
  Tensor output(const Tensor& y) const;

 private:
  const NodeList& next_;
  TensorVec& slots_;
  GraphTask* task_ = nullptr;
  const std::uint32_t* targets_ = nullptr;
  const std::shared_ptr<Node>* self_ = nullptr;
  bool create_graph_ = false;
};

// True when dy, the gradient the engine hands a backward function, is held by nothing else
// (no other tensor, view or saved closure): the function may then write its result over dy
// and return dy, saving an allocation (a chain of scalar ops allocates nothing in backward).
// The caller's seed, or a gradient that another node or a leaf's .grad also holds, is
// shared and so never written. Writing over dy must be its last use in the backward: a
// g[j] = dy made before it would still count as one holder and see the new values.
inline bool sole_gradient(const Tensor& dy) {
  const auto& impl = dy.impl_ptr();
  return impl.use_count() == 1 && impl->storage.use_count() == 1 && !impl->requires_grad();
}

// ---- saved tensors and the version check (PyTorch's SavedVariable) ----
// A backward closure captures each input or output it reads as a SavedTensor, one line:
//
//   record("mul", y, {a, b}, [a = SavedTensor(a), b = SavedTensor(b)](const Tensor& dy, Grads& g) {
//     ... mul(dy, b) ...   // the body reads it as the Tensor it is
//
// A SavedTensor is that tensor plus its storage's version when it was saved. When record()
// moves the closure into its node, each SavedTensor in it links itself into the node's list
// (Node::saved_tensors): a closure is opaque, so the moves are the one moment the node can
// learn what it holds. Before the node's backward runs, every one is checked: an in-place
// write to the storage since (fill_, add_, an optimizer step, through a view or a detach())
// raises heed::Error naming the op, the input's position, its shape and both versions,
// instead of a backward that silently reads the new values. A tensor that is not saved (the
// input of an add) may be written freely, as in PyTorch. A group of them (a variable number of
// inputs) is a SavedTensors.
class SavedTensor : public Tensor {
 public:
  static constexpr int kOutput = -1, kOther = -2;  // values of `where` besides an input index
  SavedTensor() = default;
  SavedTensor(const Tensor& t) : Tensor(t), version_(t.defined() ? t.version() : 0) {}
  SavedTensor(const SavedTensor& o) : Tensor(o), where(o.where), version_(o.version_) { enlist(); }
  SavedTensor(SavedTensor&& o) noexcept
      : Tensor(std::move(o)), where(o.where), version_(o.version_) { enlist(); }
  SavedTensor& operator=(const SavedTensor&) = delete;
  SavedTensor& operator=(SavedTensor&&) = delete;

  // heed::Error unless the storage is still at the version it had when saved; `op` saved it.
  void check(const char* op) const {
    if (defined() && version() != version_) fail_modified(op);
  }
  uint64_t saved_version() const { return version_; }
  SavedTensor* next_saved() const { return next_; }

  int where = kOther;  // input i (>= 0), kOutput or kOther: set by connect(), for the message

 private:
  friend struct Node;
  template <class F>
  friend struct FunctionNode;
  void enlist();  // link into the node whose closure is being moved in, if any (below)
  [[noreturn]] void fail_modified(const char* op) const;
  uint64_t version_ = 0;
  SavedTensor* next_ = nullptr;
};

// Several saved tensors (an op with a variable number of inputs). Moving it moves each
// element, so each links itself into the node as a single SavedTensor does.
struct SavedTensors : std::vector<SavedTensor> {
  SavedTensors() = default;
  SavedTensors(const SavedTensors&) = default;
  SavedTensors(SavedTensors&& o) {
    reserve(o.size());
    for (SavedTensor& t : o) emplace_back(std::move(t));
  }
  SavedTensors& operator=(const SavedTensors&) = delete;
};

namespace detail {
// The node a gradient for t goes to: its grad_fn, or for a leaf that requires grad its
// AccumulateGrad (made on first use); null when t needs no gradient (node.cpp).
std::shared_ptr<Node> producer_of(const Tensor& t);

// While set, connect() appends every node it links into the graph (checkpoint's record of
// what fn built, recompute.cpp). Per thread; null otherwise.
inline thread_local std::vector<const Node*>* recorded_nodes = nullptr;

// While a FunctionNode moves its closure in, the end of its saved_tensors list
// (SavedTensor::enlist appends there); null otherwise. Per thread.
inline thread_local SavedTensor** saved_tail = nullptr;

// heed::Error when the closure object [closure, closure + bytes) holds an input as a plain
// Tensor: bytes equal to the input Tensor's own (its TensorImpl and control-block
// addresses) that are not the start of one of the node's SavedTensors (node.cpp). Only with assertions on (make_node below).
void check_captures(const char* op, const void* closure, std::size_t bytes,
                    const SavedTensor* saved, const InputRef* inputs, int n);
void check_captures(const char* op, const void* closure, std::size_t bytes,
                    const SavedTensor* saved, const Tensor* inputs, int n);
}  // namespace detail

// A recorded op: its name and its backward closure (which owns the saved tensors).
template <class F>
struct FunctionNode final : Node {
  FunctionNode(const char* op, F&& f) : op(op) {
    struct Adopt {  // saved_tail set for the move, put back even if it throws
      SavedTensor** outer = detail::saved_tail;
      ~Adopt() { detail::saved_tail = outer; }
    } adopt;
    detail::saved_tail = &saved_tensors;
#ifndef NDEBUG
    // Zero bytes under the closure, so that its padding (and a disengaged optional's value)
    // holds no stale address from the recycled block for check_captures to mistake for a
    // captured input.
    std::memset(static_cast<void*>(&fn), 0, sizeof(fn));
#endif
    fn.emplace(std::move(f));  // each SavedTensor's move links it into saved_tensors
  }
  const char* op_name() const override { return op; }
  void rename(const char* composed) override { op = composed; }
  void apply(const Tensor& grad_out, Grads& g) override;
  void release() override {
    saved_tensors = nullptr;
    fn.reset();
  }
  const char* op;
  std::optional<F> fn;  // the backward closure and the tensors it saved
};

[[noreturn]] void fail_released(const char* op);

template <class F>
void FunctionNode<F>::apply(const Tensor& grad_out, Grads& g) {
  if (!fn) fail_released(op);
  for (const SavedTensor* s = saved_tensors; s; s = s->next_) s->check(op);
  (*fn)(grad_out, g);
}

inline void SavedTensor::enlist() {
  if (!detail::saved_tail) return;
  *detail::saved_tail = this;
  detail::saved_tail = &next_;
}

// An op's inputs as record() takes them, `{a, b}`: references, not copies, so listing them
// costs no reference-count traffic (a Tensor copy is an atomic increment and decrement).
// A temporary listed in the braces lives until the end of the statement, as record() needs.
class InputRef {
 public:
  InputRef(const Tensor& t) : t_(&t) {}  // implicit: `{a, b}` builds the list
  const Tensor& operator*() const { return *t_; }
  const Tensor* operator->() const { return t_; }

 private:
  const Tensor* t_;
};

// True when an op on these inputs must be recorded.
inline bool any_requires_grad(std::initializer_list<InputRef> inputs) {
  if (!GradMode::enabled()) return false;
  for (const InputRef& t : inputs)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}
inline bool any_requires_grad(const std::vector<Tensor>& inputs) {
  bool any = false;
  if (GradMode::enabled())
    for (const Tensor& t : inputs) any = any || t.requires_grad();
  return any;
}

// Link `node` into the graph: edges to each input's producer, and out.grad_fn = node (the
// node is moved there: out owns it).
void connect(std::shared_ptr<Node> node, const Tensor& out, const InputRef* inputs, int n);
void connect(std::shared_ptr<Node> node, const Tensor& out, const Tensor* inputs, int n);

// Given to record() for a backward that supports double backward (above); a backward that
// does not is recorded without a tag, which is kFirstOrder.
struct FirstOrder {};
inline constexpr FirstOrder kFirstOrder{};
struct DoubleBackward {};
inline constexpr DoubleBackward kDoubleBackward{};

namespace detail {
// The node for `backward`, before connect(). In a build with assertions (no NDEBUG), a
// closure that holds one of the op's inputs as a plain Tensor instead of a SavedTensor is a
// heed::Error: it would skip the version check (node.cpp).
template <class F, class Input>
std::shared_ptr<Node> make_node(const char* op, F&& backward, bool twice, const Input* inputs, int n) {
  using Fn = std::decay_t<F>;
  auto node = std::allocate_shared<FunctionNode<Fn>>(CachingAllocator<FunctionNode<Fn>>(), op,
                                                     Fn(std::forward<F>(backward)));
  node->double_backward = twice;
#ifndef NDEBUG
  check_captures(op, &*node->fn, sizeof(Fn), node->saved_tensors, inputs, n);
#else
  (void)inputs, (void)n;
#endif
  return node;
}

// record()'s one body. Inputs is std::initializer_list<InputRef> (`{a, b}`) or
// std::vector<Tensor> (cat, stack); Order is FirstOrder or DoubleBackward.
template <class Inputs, class Order, class F>
Tensor record_with(const char* op, const Tensor& out, const Inputs& inputs, Order, F&& backward) {
  static_assert(std::is_same_v<Order, FirstOrder> || std::is_same_v<Order, DoubleBackward>,
                "record(op, out, inputs, [kDoubleBackward,] backward)");
  if (!any_requires_grad(inputs)) return out;
  const int n = static_cast<int>(inputs.size());
  connect(make_node(op, std::forward<F>(backward), std::is_same_v<Order, DoubleBackward>,
                    std::data(inputs), n),
          out, std::data(inputs), n);
  return out;
}
template <class Inputs, class F>
Tensor record_with(const char* op, const Tensor& out, const Inputs& inputs, F&& backward) {
  return record_with(op, out, inputs, kFirstOrder, std::forward<F>(backward));
}
}  // namespace detail

// record(op, out, {inputs...}, backward): attach a Node to `out` if any input requires
// grad (and grad mode is on). backward is `void(const Tensor& dy, Grads& g)`.
// record(op, out, {inputs...}, kDoubleBackward, backward): the same for a backward that
// supports create_graph (above). The inputs are a braced list or, for ops with a variable
// number of inputs (cat, stack), a std::vector<Tensor>.
template <class... OrderAndBackward>
Tensor record(const char* op, const Tensor& out, std::initializer_list<InputRef> inputs,
              OrderAndBackward&&... backward) {
  return detail::record_with(op, out, inputs, std::forward<OrderAndBackward>(backward)...);
}
template <class... OrderAndBackward>
Tensor record(const char* op, const Tensor& out, const std::vector<Tensor>& inputs,
              OrderAndBackward&&... backward) {
  return detail::record_with(op, out, inputs, std::forward<OrderAndBackward>(backward)...);
}

// An op composed of others names its output's node after itself, as PyTorch names
// MeanBackward: mean(x) = sum(x) * (1 / n) ends in a mul node, which becomes "mean".
//   return named("mean", sum(x) * (real(1) / real(n)), {x});
// Only a node the composed op made is renamed: when `y` is one of `inputs` (a squeeze that
// changed nothing) or carries an input's own node, it is returned as it is.
inline Tensor named(const char* op, const Tensor& y, std::initializer_list<InputRef> inputs) {
  Node* node = y.defined() ? y.grad_fn().get() : nullptr;
  if (!node) return y;
  for (const InputRef& x : inputs)
    if (x->defined() && x->grad_fn().get() == node) return y;
  node->rename(op);
  return y;
}

}  // namespace heed
