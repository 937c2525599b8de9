// tensor.h - Tensor: the n-dimensional array heed computes with. Read this file first.
//
// A Tensor is a cheap handle (a shared pointer) to a TensorImpl:
//   storage  contiguous row-major `real` buffer, shared by views (reshape, view, detach)
//   shape    its dimensions (core/shape.h)
//   autograd requires_grad, the Node that produced it (grad_fn), and for leaves the
//            accumulated gradient (grad)
// Copying a Tensor copies the handle, not the data (as in libtorch); clone() copies data.
//
// Ownership: a tensor owns the Node that produced it, a Node owns the producers of its
// inputs (autograd/node.h). Nothing owns its consumers, so graphs cannot form cycles.
//
// Shape letters used in comments across heed: B batch, T time, C channels/features,
// H heads, D head dim, V vocabulary, N rows. `// (B, T, C)` after a tensor is its shape.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "real.h"
#include "shape.h"

namespace heed {

struct Node;
struct TensorImpl;
class IndexTensor;
struct ValuesIndices;  // autograd/reduce_minmax.h: what max/min over a dim and topk return

class Tensor {
 public:
  Tensor() = default;  // undefined: defined() == false
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- metadata and data ----
  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  int dim() const { return shape().size(); }
  int64_t size(int64_t d) const;  // negative d counts from the end
  int64_t numel() const;
  // Contiguous, row-major. Writes through this pointer are not tracked by the version
  // counter below (as PyTorch's .data): code that writes a tensor in place through it, after
  // the tensor may have been saved for a backward, calls bump_version() (the optimizers and
  // initialisers do).
  real* data() const;
  real item() const;                        // the value of a one-element tensor
  real at(std::initializer_list<int64_t> index) const;  // one element, bounds-checked
  std::vector<real> to_vector() const;

  // ---- autograd (autograd/tensor_autograd.cpp; backward: autograd/engine.cpp) ----
  bool requires_grad() const;
  Tensor& requires_grad_(bool on = true);   // only on leaves, as in PyTorch
  bool is_leaf() const;
  Tensor grad() const;                      // accumulated dL/dthis (leaves); undefined if none
  void zero_grad() const;                   // zero the accumulated gradient, keeping its buffer
  void set_grad(const Tensor& g) const;     // replace the accumulated gradient (or clear it with Tensor())
  const std::shared_ptr<Node>& grad_fn() const;
  // Backpropagate from this tensor. A scalar needs no argument; otherwise pass dL/dthis.
  // retain_graph keeps the graph for another backward (default: create_graph). create_graph
  // records the pass itself, so the .grad() it leaves is differentiable (higher-order
  // gradients; autograd::grad in autograd/autograd.h returns them without touching .grad()).
  // Without create_graph, reading .grad() after backward(g, true) gives a plain number:
  // using it in a loss (a gradient penalty) contributes no gradient.
  void backward(const Tensor& grad = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  Tensor detach() const;                    // same storage, cut from the graph
  // The storage's version counter (PyTorch's _version), shared by every view and detach() of
  // it: each in-place op below bumps it, and an op that saved the tensor for its backward
  // raises heed::Error in backward when the version it recorded is no longer current
  // ("one of the variables needed for gradient computation has been modified by an inplace
  // operation: input 0 of 'mul' (shape (2)) is at version 1; expected version 0").
  uint64_t version() const;
  void bump_version() const;                // after writing through data() in place
  // Call hook(leaf) each time a backward pass has finished accumulating into this leaf's
  // grad() (torch's register_post_accumulate_grad_hook): the engine sums every consumer's
  // gradient before it reaches the leaf, so once per backward the leaf's gradient for that
  // pass is final. Data parallel training (optim/distributed_mpi.h) starts reducing a
  // bucket of gradients from here while backward goes on. Only on leaves that require
  // grad. The hook must not capture this tensor by value (the leaf would own itself);
  // it gets the leaf as its argument. Returns a handle for remove_post_accumulate_grad_hook.
  int64_t register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const;
  void remove_post_accumulate_grad_hook(int64_t handle) const;  // unknown handle: no-op

  // ---- shape views (autograd/views.cpp) ----
  Tensor reshape(const Shape& shape) const;   // one dim may be -1; shares storage
  Tensor view(const Shape& shape) const;      // same as reshape (all tensors are contiguous)
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor unsqueeze(int64_t d) const;
  Tensor squeeze(int64_t d) const;

  // ---- ops as methods, as a libtorch user types them: x.sum(1), x.softmax(-1) ----
  // Each is one line calling the free function of the same name (heed::sum(x, 1), ...),
  // which holds the only implementation and its gradient. They are declared here and
  // defined in autograd/tensor_methods.cpp, where the ops live: core/ includes nothing
  // above it. Using max/min over a dim or topk needs autograd/reduce.h for ValuesIndices
  // (<heed/heed.h> has it).
  Tensor sum() const;                                        // shape ()
  Tensor sum(int64_t dim, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(int64_t dim, bool keepdim = false) const;
  Tensor max() const;                                        // shape ()
  ValuesIndices max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  ValuesIndices min(int64_t dim, bool keepdim = false) const;
  IndexTensor argmax(int64_t dim, bool keepdim = false) const;
  IndexTensor argmin(int64_t dim, bool keepdim = false) const;
  ValuesIndices topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor matmul(const Tensor& other) const;
  Tensor select(int64_t dim, int64_t index) const;           // dim removed
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor abs() const;
  Tensor neg() const;
  Tensor pow(real exponent) const;
  Tensor clone() const;       // a copy that stays in the graph
  Tensor contiguous() const;  // *this: every heed tensor is contiguous already

  // ---- in-place updates, outside the graph (optimizers, initialisers) ----
  // They refuse a tensor that is part of a graph being recorded (a leaf that requires
  // grad while grad mode is on, or a non-leaf), as PyTorch does.
  Tensor& zero_();
  Tensor& fill_(real v);
  Tensor& copy_(const Tensor& src);                 // same numel
  Tensor& add_(const Tensor& other, real alpha = 1);  // this += alpha * other, same shape
  Tensor& mul_(real s);

  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  [[noreturn]] static void fail_undefined();  // heed::Error: "use of an undefined tensor"
  std::shared_ptr<TensorImpl> impl_;
};

// A contiguous buffer from the caching allocator (core/allocator.h). A buffer of at most
// kInlineBytes (a handful of numbers: scalars, biases of tiny layers, the tensors of a
// long chain of tiny ops) lives inside the Storage itself, so such a tensor costs one
// allocation fewer; its Storage, with the shared_ptr's control block, still fits in one
// 64-byte block.
struct Storage {
  static constexpr int64_t kInlineBytes = 32;
  explicit Storage(int64_t numel);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  real* data;  // inline_ or a block of its own
  // In-place writes so far (Tensor::version). Relaxed: two threads writing disjoint views of
  // one storage at once may lose one bump, but each leaves the counter changed.
  std::atomic<uint64_t> version{0};
  union {
    int64_t heap_numel;  // the block's size in elements, when data is not inline_
    alignas(16) unsigned char inline_[kInlineBytes];
  };
  void bump() {
    version.store(version.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};

// What only a leaf that requires grad (a parameter), or a tensor given .set_grad(), carries:
// its gradient and what adds into it. Kept apart, as PyTorch keeps AutogradMeta apart, so
// the header of every other tensor (one per recorded op) is two cache lines, not three.
struct GradState {
  bool requires_grad = false;
  std::mutex mu;  // guards accumulator, the engine's adds into grad, and the hook list
  // The node that adds into `grad` (weak: no cycle), shared by every graph that uses this
  // leaf, on any thread: a backward pass keeps its running state in the pass, not the node.
  std::weak_ptr<Node> accumulator;
  Tensor grad;  // accumulated gradient
  // (handle, hook) called after each accumulation into grad (engine.cpp); registered and
  // read under mu, so a thread may add one while another thread's backward runs
  std::vector<std::pair<int64_t, std::function<void(const Tensor&)>>> post_accumulate_hooks;
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  std::shared_ptr<Node> grad_fn;      // the op that produced this tensor (null for leaves)
  std::unique_ptr<GradState> leaf;    // null until requires_grad_() or set_grad()
  // An op's output requires grad (record() gave it a grad_fn); a leaf when it was asked to.
  bool requires_grad() const { return grad_fn || (leaf && leaf->requires_grad); }
  GradState& leaf_state() {
    if (!leaf) leaf = std::make_unique<GradState>();
    return *leaf;
  }
};

inline const Shape& Tensor::shape() const {
  if (!impl_) fail_undefined();
  return impl_->shape;
}

inline real* Tensor::data() const {
  if (!impl_) fail_undefined();
  return impl_->storage->data;
}

// ---- factories (all contiguous; requires_grad off; call .requires_grad_() for parameters) ----
// The data of t, or null when t is undefined (no bias, a gradient nobody needs): how the
// kernels over plain pointers take an optional tensor.
inline real* data_or_null(const Tensor& t) { return t.defined() ? t.data() : nullptr; }

Tensor empty(const Shape& shape);  // uninitialised
Tensor zeros(const Shape& shape);
Tensor ones(const Shape& shape);
Tensor full(const Shape& shape, real value);
Tensor scalar_tensor(real value);  // shape ()
Tensor arange(real end);           // [0, end) step 1
Tensor arange(real start, real end, real step = 1);
Tensor randn(const Shape& shape);  // N(0,1), from the seeded generator (core/random.h)
Tensor rand(const Shape& shape);   // U[0,1)
Tensor from_vector(const std::vector<real>& values, const Shape& shape);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Tensors with names, in a fixed order: a module's parameters and buffers
// (nn::Module::named_parameters), an optimizer's state, a checkpoint's contents.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// ---- integer indices: token ids, class targets, gather indices ----
// A plain value type of int64 ids with a shape. Ops that take one (index_select,
// gather, embedding, cross_entropy) check every id against the size it indexes.
class IndexTensor {
 public:
  IndexTensor() = default;
  IndexTensor(std::vector<int64_t> ids);                  // 1-D
  IndexTensor(std::vector<int64_t> ids, const Shape& shape);
  const Shape& shape() const { return shape_; }
  int dim() const { return shape_.size(); }
  int64_t size(int64_t d) const;
  int64_t numel() const { return static_cast<int64_t>(ids_.size()); }
  const int64_t* data() const { return ids_.data(); }
  int64_t* data() { return ids_.data(); }
  int64_t operator[](int64_t i) const { return ids_[i]; }
  const std::vector<int64_t>& vec() const { return ids_; }
  IndexTensor reshape(const Shape& shape) const;
  // Throws heed::Error naming `op` if any id is outside [0, bound).
  void check_range(const char* op, int64_t bound) const;

 private:
  std::vector<int64_t> ids_;
  Shape shape_;
};

}  // namespace heed
