// tensor.h - Tensor: the n-dimensional array heed computes with. Read this file first.
//
// A Tensor is a cheap handle (a shared pointer) to a TensorImpl:
//   storage  contiguous row-major `real` buffer, shared by views (reshape, view, detach,
//            and the block views below), the tensor's elements starting at `offset`
//   shape    its dimensions (core/shape.h)
//   autograd requires_grad, the Node that produced it (grad_fn), and for leaves the
//            accumulated gradient (grad)
// Copying a Tensor copies the handle, not the data (as in libtorch); clone() copies data.
//
// Ownership: a tensor owns the Node that produced it, a Node owns the producers of its
// inputs (autograd/engine/node.h). Nothing owns its consumers, so graphs cannot form cycles.
//
// The file reads top-down: the data model (Storage, ViewMark, TensorImpl; a leaf's
// GradState after Tensor, since it holds one), then Tensor's API, then the factories and
// printing. Integer ids are IndexTensor (core/index_tensor.h, included at the end).
//
// Shape letters used in comments across heed: B batch, T time, C channels/features,
// H heads, D head dim, V vocabulary, N rows. `// (B, T, C)` after a tensor is its shape.
#pragma once
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "arg.h"
#include "device.h"
#include "real.h"
#include "shape.h"
#include "slice.h"

namespace heed {

struct Node;
class Tensor;
struct GradState;
class IndexTensor;
struct ValuesIndices;  // autograd/ops/reduce_minmax.h: what max/min over a dim and topk return

// ---- the data model: a buffer, and a tensor's view of it ----

// A contiguous buffer from the caching allocator (core/allocator.h). A buffer of at most
// kInlineBytes (a handful of numbers: scalars, biases of tiny layers, the tensors of a
// long chain of tiny ops) lives inside the Storage itself, so such a tensor costs one
// allocation fewer; its Storage, with the shared_ptr's control block, still fits in one
// 64-byte block.
struct Storage {
  static constexpr int64_t kInlineBytes = 32;
  explicit Storage(int64_t numel);
  // Memory the caller owns (from_blob): never freed here; heap_numel is kBorrowed.
  struct Borrowed {};
  static constexpr int64_t kBorrowed = -1;
  Storage(real* external, Borrowed) : data(external), heap_numel(kBorrowed) {}
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

// How a tensor came from a view op (Tensor's "Views" comment, below). A shared view's
// in-place ops write its base; a copy's refuse, naming op and dim.
struct ViewMark {
  const char* op = nullptr;  // "narrow", "select", "transpose", ...; null: not a view's result
  int32_t dim = -1;          // the dim op worked along (-1: several, as permute)
  bool shares = false;       // true: storage is the base's, at offset; false: a copy
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  int64_t offset = 0;  // where element 0 lives in storage (non-zero for a view of a block)
  Shape shape;
  ViewMark view;
  std::shared_ptr<Node> grad_fn;      // the op that produced this tensor (null for leaves)
  std::unique_ptr<GradState> leaf;    // null until requires_grad_() or set_grad() (after Tensor)
  // An op's output requires grad (record() gave it a grad_fn); a leaf when it was asked to.
  bool requires_grad() const;
  GradState& leaf_state();  // leaf, made on first use
};

// ---- Tensor: the handle programs hold ----

class Tensor {
 public:
  Tensor() = default;  // undefined: defined() == false
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- metadata and data ----
  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  IntArrayRef sizes() const { return shape(); }  // libtorch's spelling; prints "[2, 3]"
  int dim() const { return shape().size(); }
  int64_t size(int64_t d) const;  // negative d counts from the end
  int64_t numel() const;
  // Contiguous, row-major: the storage's buffer from this tensor's offset (a shared view's
  // is where its block starts; see "Views" below). Writes through this pointer are not tracked by the version
  // counter below (as PyTorch's .data): code that writes a tensor in place through it, after
  // the tensor may have been saved for a backward, calls bump_version() (the optimizers and
  // initialisers do).
  real* data() const;
  // libtorch's spelling of the same pointer: x.data_ptr<float>() (x.data_ptr<double>() in the
  // double build); another T does not compile. libtorch's x.data() (a tensor sharing the
  // storage, outside the graph) is x.detach().
  template <class T>
  T* data_ptr() const {
    static_assert(std::is_same_v<T, real>, "data_ptr<T>(): T must be heed::real (float in libheed.a)");
    return data();
  }
  real item() const;                        // the value of a one-element tensor
  // libtorch's template form: x.item<float>(), x.item<int64_t>(), x.item<bool>() (non-zero).
  // An integer type truncates toward zero, as torch; NaN, an infinity or a value outside the
  // type's range is a heed::Error. Inside a template where x's type depends on a template
  // parameter, C++ requires `x.template item<float>()` ("expected primary-expression before
  // 'float'" otherwise): there, write `float(x.item())`, which item() above allows anywhere.
  template <class T>
  T item() const;
  real at(std::initializer_list<int64_t> index) const;  // one element, bounds-checked, may be negative
  std::vector<real> to_vector() const;

  // ---- autograd (autograd/engine/tensor_autograd.cpp; backward: autograd/engine/engine.cpp) ----
  bool requires_grad() const;
  Tensor& requires_grad_(bool on = true);   // only on leaves, as in PyTorch
  Tensor& set_requires_grad(bool on) { return requires_grad_(on); }  // libtorch's spelling
  bool is_leaf() const;
  // Accumulated dL/dthis (leaves); undefined if none. A const reference, as libtorch's:
  // `p.grad() = Tensor()` does not compile (it would assign a copy and change nothing);
  // mutable_grad() is the gradient itself, to assign or update (`p.mutable_grad() = Tensor()`).
  const Tensor& grad() const;
  Tensor& mutable_grad() const;
  void zero_grad() const;                   // zero the accumulated gradient, keeping its buffer
  void set_grad(const Tensor& g) const;     // replace the accumulated gradient (or clear it with Tensor())
  const std::shared_ptr<Node>& grad_fn() const;
  // Backpropagate from this tensor. A scalar needs no argument; otherwise pass dL/dthis.
  // retain_graph keeps the graph for another backward (default: create_graph). create_graph
  // records the pass itself, so the .grad() it leaves is differentiable (higher-order
  // gradients; autograd::grad in autograd/engine/engine.h returns them without touching .grad()).
  // Without create_graph, reading .grad() after backward(g, true) gives a plain number:
  // using it in a loss (a gradient penalty) contributes no gradient.
  void backward(const Tensor& grad = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  Tensor detach() const;                    // same storage, cut from the graph
  // In place, as libtorch's detach_(): this tensor loses its grad_fn and requires_grad (a
  // leaf that required grad stops requiring it); every handle to it sees the change.
  Tensor& detach_();
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

  // ---- shape views (autograd/ops/views.cpp) ----
  // Views. Every heed tensor is contiguous, so what libtorch returns as a view is one of two
  // things here:
  //  - a shared view, when its elements are one contiguous block of x: reshape, view,
  //    view_as, reshape_as, flatten, squeeze, unsqueeze, detach; narrow, slice (step 1),
  //    chunk, split and split_with_sizes along dim 0,
  //    or along a dim d when every dim before d has size 1; select(0, i), unbind(0) and
  //    x[i] (so x[i][j] too), likewise select(d, i) when every dim before d has size 1;
  //    x.index({...}) whose region is one block (x.index({i}), x.index({i, Slice(a, b)}),
  //    x.index({Slice(a, b)})); and views of these. It shares x's storage at an element offset: a write through it (fill_,
  //    copy_, add_, +=, index_put_, ...) changes x, x's changes show in it, and the version
  //    counter is the storage's, so a backward that saved x refuses after such a write.
  //    Under grad mode a write through a shared view that requires grad (x or the view in
  //    a graph) is refused, naming the view op, as PyTorch refuses a view of a leaf:
  //    wrap it in heed::NoGradGuard (a parameter's row: `NoGradGuard g; w[1].fill_(7);`
  //    writes w), or clone() first to write a copy.
  //  - a copy, for every other view: transpose, permute, t(), movedim, swapaxes, swapdims,
  //    narrow/slice/select/chunk/split/unbind along a later dim, slice with a step, expand,
  //    expand_as, x.index({...}) of any other region. The copy carries the
  //    op's name, and every in-place op on it raises heed::Error naming the op and dim
  //    ("fill_: this tensor is a copy made by narrow(dim 1), not a view of its input ..."),
  //    since libtorch would have written x and heed cannot. Write x itself
  //    (x.index_put_({Slice(), Slice(a, b)}, v), or a narrow along dim 0), or clone() the
  //    copy to write it. Ops' outputs, clone() and contiguous() are not marked.
  //  An in-place op that reads a tensor sharing some but not all of the elements it writes
  //  (x.narrow(0, 1, 3).copy_(x.narrow(0, 0, 3)), x.add_(x[0])) raises, as PyTorch's
  //  memory-overlap check; the same elements (x.add_(x)) or disjoint blocks are fine.
  Tensor reshape(const Shape& shape) const;   // one dim may be -1; shares storage
  Tensor view(const Shape& shape) const;      // same as reshape (all tensors are contiguous)
  Tensor view_as(const Tensor& other) const { return view(other.shape()); }
  Tensor reshape_as(const Tensor& other) const { return reshape(other.shape()); }
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor unsqueeze(int64_t d) const;
  Tensor squeeze(int64_t d) const;            // as it is when size(d) != 1, as PyTorch
  Tensor squeeze() const;                     // every dim of size 1
  Tensor movedim(int64_t source, int64_t destination) const;  // autograd/shape_ops.h
  Tensor movedim(const std::vector<int64_t>& source, const std::vector<int64_t>& destination) const;
  Tensor swapaxes(int64_t d0, int64_t d1) const;             // transpose(d0, d1)
  Tensor swapdims(int64_t d0, int64_t d1) const;

  // ---- ops as methods, as a libtorch user types them: x.sum(1), x.softmax(-1) ----
  // Each is one line calling the free function of the same name (heed::sum(x, 1), ...),
  // which holds the only implementation and its gradient. They are declared here and
  // defined in autograd/ops/tensor_methods.cpp, where the ops live: core/ includes nothing
  // above it. Using max/min over a dim or topk needs autograd/ops/reduce.h for ValuesIndices
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
  Tensor operator[](int64_t index) const { return select(0, index); }  // x[i], libtorch's
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  // `chunks` pieces along dim, as torch.chunk: each ceil(size / chunks) long, the last
  // shorter, and fewer than `chunks` when the size runs out (autograd/ops/shape.h).
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  // Pieces of split_size (the last shorter), or of the given sizes; x.select(dim, i) for
  // every i (autograd/shape_ops.h).
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(const std::vector<int64_t>& split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(const std::vector<int64_t>& split_sizes, int64_t dim = 0) const {
    return split(split_sizes, dim);
  }
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  // Draws from the rows of these probabilities, as torch.multinomial (core/multinomial.h).
  IndexTensor multinomial(int64_t num_samples, bool replacement = false) const;
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
  Tensor contiguous() const;  // *this (every heed tensor is contiguous); a view's copy unmarked
  // libtorch's moves (core/device.h): heed's tensors are on the CPU in the build's real type,
  // so these return *this, or throw heed::Error for another device or type.
  Tensor to(const Device& device) const;
  Tensor to(ScalarType type) const;
  Tensor cpu() const { return *this; }
  Device device() const { return kCPU; }
  Tensor sin() const;
  Tensor cos() const;
  Tensor norm(double p = 2) const;                           // autograd/ops/norm.h; shape ()
  Tensor norm(double p, int64_t dim, bool keepdim = false) const;
  Tensor norm(double p, const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor all() const;                                        // 0/1, shape ()
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor mm(const Tensor& other) const;                      // autograd/ops/mm.h: 2-D only
  Tensor bmm(const Tensor& other) const;                     // 3-D only
  Tensor t() const;            // transpose(0, 1) of a 2-D tensor; a 0-D or 1-D one as it is
  Tensor expand(const Shape& shape) const;                   // broadcast up to shape (copies); -1 keeps a dim
  Tensor expand_as(const Tensor& other) const;               // expand(other.shape())
  // 0/1 tensors (autograd/ops/compare.h), never requiring grad: x.eq(y), logits.argmax... x.gt(0)
  Tensor eq(const Tensor& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor le(const Tensor& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor eq(real other) const;
  Tensor ne(real other) const;
  Tensor lt(real other) const;
  Tensor le(real other) const;
  Tensor gt(real other) const;
  Tensor ge(real other) const;
  // x[:, 0::2] as x.index({Slice(), Slice(0, None, 2)}) (core/slice.h lists the forms),
  // differentiable; autograd/ops/tensor_index.h has the rules and the free functions.
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;

  // ---- compound assignment and index_put_, as libtorch ----
  // x += y, x -= y, x *= y, x /= y (y a tensor broadcasting to x's shape, or a number) write
  // x in place and bump its version, as the in-place updates below, when no graph is being
  // recorded through them. A leaf that requires grad is refused while grad mode is on, as
  // in PyTorch ("wrap it in heed::NoGradGuard"). When x is itself an op's output in the
  // graph, or y requires grad (grad mode on), heed records x + y as an op and makes x refer
  // to the result, so `loss += F::nll_loss(...)` in a loop builds the graph libtorch builds,
  // with the same values and gradients; unlike libtorch, another handle to x's old storage
  // (a view taken earlier) then keeps the old values.
  Tensor& operator+=(const Tensor& other);
  Tensor& operator-=(const Tensor& other);
  Tensor& operator*=(const Tensor& other);
  Tensor& operator/=(const Tensor& other);
  Tensor& operator+=(real other);
  Tensor& operator-=(real other);
  Tensor& operator*=(real other);
  Tensor& operator/=(real other);
  // x[indices] = v (v broadcasting to x.index(indices)'s shape, or a number), by the same
  // rules as += above: in place when no graph runs through it, else recorded (differentiable
  // in x and v) and x refers to the result.
  //   pe.index_put_({Slice(), Slice(0, None, 2)}, sin(pos * freq));   // pe[:, 0::2] = ...
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& v);
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, real v);

  // ---- in-place updates, as libtorch's (autograd/ops/inplace.cpp) ----
  // By the rule of x += y above: written in place (the version bumped) when no graph runs
  // through x or the argument; a leaf that requires grad is refused while grad mode is on;
  // otherwise the op is recorded and x refers to its result (x.add_(y) is x = x + alpha*y).
  // The argument broadcasts to x's shape.
  Tensor& add_(const Tensor& other, real alpha = 1);  // x += alpha * other
  Tensor& add_(real other);
  Tensor& sub_(const Tensor& other, real alpha = 1);  // x -= alpha * other
  Tensor& sub_(real other);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(real s);
  Tensor& div_(const Tensor& other);
  Tensor& div_(real s);
  Tensor& exp_();
  Tensor& clamp_(real lo, real hi);                   // -inf / inf for one side
  // These three only write in place (core/tensor.cpp): a tensor in a graph being recorded
  // (one that requires grad, grad mode on) is refused. Const, as libtorch's, so that
  // p.grad().zero_() compiles on grad()'s const reference.
  const Tensor& zero_() const;
  const Tensor& fill_(real v) const;
  const Tensor& copy_(const Tensor& src) const;       // same numel
  // Out of place, one call to the op of that name (autograd/ops/arith.h): x.add(y), x.mul(2).
  Tensor add(const Tensor& other, real alpha = 1) const;
  Tensor add(real other) const;
  Tensor sub(const Tensor& other, real alpha = 1) const;
  Tensor sub(real other) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(real other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(real other) const;

  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  [[noreturn]] static void fail_undefined();  // heed::Error: "use of an undefined tensor"
  std::shared_ptr<TensorImpl> impl_;
};

// What only a leaf that requires grad (a parameter), or a tensor given .set_grad(), carries:
// its gradient and what adds into it. Kept apart, as PyTorch keeps AutogradMeta apart, so
// the header of every other tensor (one per recorded op), with its shared_ptr's control
// block, is three cache lines, not four.
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

inline bool TensorImpl::requires_grad() const { return grad_fn || (leaf && leaf->requires_grad); }
inline GradState& TensorImpl::leaf_state() {
  if (!leaf) leaf = std::make_unique<GradState>();
  return *leaf;
}

inline const Shape& Tensor::shape() const {
  if (!impl_) fail_undefined();
  return impl_->shape;
}

inline real* Tensor::data() const {
  if (!impl_) fail_undefined();
  return impl_->storage->data + impl_->offset;
}

namespace detail {
// Every in-place write starts here (zero_, fill_, copy_, add_ and the other updates, +=,
// index_put_, the nn::init functions): heed::Error naming op when t is the copy a view op
// made (the write would not reach its input), or a shared view in a graph being recorded
// (t or its base requires grad, grad mode on). Returns normally otherwise.
void check_writable(const char* op, const Tensor& t);
// PyTorch's memory-overlap rule for an in-place op that reads `in` while writing `out`:
// heed::Error naming op when the two share some of their elements but not all (the result
// would depend on the order the loop runs in: x[1:4].copy_(x[0:3]), x.add_(x[0])), or, with
// `any_overlap`, when they share any element (index_put_'s values). Same elements
// (x.add_(x)) and disjoint blocks of one storage pass.
void check_no_overlap(const char* op, const Tensor& out, const Tensor& in, bool any_overlap = false);
// The mark ops put on their result (core/tensor.cpp): y's view mark is {op, dim, shares}.
void mark_view(const Tensor& y, const char* op, int dim, bool shares);
// A shared view of x: `shape`'s elements from x's element `offset` on (a contiguous block of
// x), in x's storage, marked {op, dim, shares}. Not recorded: the view op records it.
Tensor share_block(const Tensor& x, int64_t offset, const Shape& shape, const char* op, int dim);
// y, a copy a view op made of x: marked {op, dim, a copy}, or with x's own mark when x is such
// a copy already (a view of a copy is a copy, named after the first: a write misses its base).
void mark_copy(const Tensor& y, const Tensor& x, const char* op, int dim);
}  // namespace detail

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
Tensor full_like(const Tensor& t, real value);
Tensor randn_like(const Tensor& t);  // N(0,1) of t's shape, from the seeded generator
Tensor rand_like(const Tensor& t);   // U[0,1)


// libtorch's TensorOptions, for the options a heed tensor has (the CPU, core/device.h; the
// build's real type): torch::randn({3, 4}, torch::requires_grad()), torch::ones(3,
// torch::kFloat) and torch::zeros({2}, device) are written the same; for instance
//   Tensor w = heed::randn({3, 4}, heed::requires_grad());   // a leaf that requires grad
//   Tensor o = heed::ones(3, heed::kFloat);                   // float: libheed.a's type
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}  // implicit, as libtorch's
  TensorOptions(Device d) : device_(d) {}
  TensorOptions(DeviceType t) : device_(t) {}
  HEED_ARG(bool, requires_grad) = false;
  HEED_ARG(ScalarType, dtype) = sizeof(real) == sizeof(double) ? kDouble : kFloat;
  HEED_ARG(Device, device) = kCPU;
};
inline TensorOptions requires_grad(bool on = true) { return TensorOptions().requires_grad(on); }
inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(const Device& d) { return TensorOptions().device(d); }
namespace detail {
// heed::Error unless o.dtype() is this build's real type.
void check_dtype(const char* op, const TensorOptions& o);
inline Tensor with_options(Tensor t, const TensorOptions& o) {
  check_dtype("TensorOptions", o);
  check_device("TensorOptions", o.device());
  if (o.requires_grad()) t.requires_grad_();
  return t;
}
}  // namespace detail
inline Tensor empty(const Shape& s, const TensorOptions& o) { return detail::with_options(empty(s), o); }
inline Tensor zeros(const Shape& s, const TensorOptions& o) { return detail::with_options(zeros(s), o); }
inline Tensor ones(const Shape& s, const TensorOptions& o) { return detail::with_options(ones(s), o); }
inline Tensor full(const Shape& s, real value, const TensorOptions& o) {
  return detail::with_options(full(s, value), o);
}
inline Tensor randn(const Shape& s, const TensorOptions& o) { return detail::with_options(randn(s), o); }
inline Tensor rand(const Shape& s, const TensorOptions& o) { return detail::with_options(rand(s), o); }
inline Tensor from_vector(const std::vector<real>& values, const Shape& s, const TensorOptions& o) {
  return detail::with_options(from_vector(values, s), o);
}
// torch::tensor: a 0-D tensor from a number, 1-D from a list, 2-D from a list of equal rows.
//   heed::tensor(2.5)   heed::tensor({0.1, 1.0, 1e-4}, heed::kFloat)   heed::tensor({{1, 2}, {3, 4}})
// An integer scalar (heed::tensor(label), int64_t or int) is an id, as libtorch's kLong
// tensor: a 0-D IndexTensor, what a dataset's Example<Tensor, IndexTensor> target takes.
// Its options must say kLong (the default); tensor(double(label)) is the float scalar.
// (The integer form is declared with IndexTensor, core/index_tensor.h.)
Tensor tensor(double value, const TensorOptions& o = {});
Tensor tensor(std::initializer_list<double> values, const TensorOptions& o = {});
Tensor tensor(std::initializer_list<std::initializer_list<double>> rows, const TensorOptions& o = {});
Tensor tensor(const std::vector<real>& values, const TensorOptions& o = {});

// torch::from_blob: a tensor over memory the caller owns and keeps alive, not copied; writes
// through either are seen by the other. The optional deleter is called with `data` when the
// last tensor (or view, or detach()) sharing it is gone, as libtorch's. heed tensors are
// contiguous: there is no strides form. data must hold shape.numel() reals (float in
// libheed.a, double in libheed_f64.a); the ids form is IndexTensor::from_blob.
//   std::vector<float> buf(12);
//   Tensor x = heed::from_blob(buf.data(), {3, 4});              // (3, 4), over buf
Tensor from_blob(real* data, const Shape& shape, const TensorOptions& o = {});
Tensor from_blob(real* data, const Shape& shape, const std::function<void(void*)>& deleter,
                 const TensorOptions& o = {});

// libtorch's layout (its at::print): the values, then a line naming the type and shape.
//    1.0000  2.0000  3.0000        a 2-D tensor: one row a line, columns of one width
//    4.0000  5.5000  6.0000
//   [ CPUFloatType{2,3} ]
// A 0-D tensor is its value and [ CPUFloatType{} ]; a 1-D one a value a line; above 2-D one
// matrix per index of the leading dims, each headed "(i,j,.,.) = ". Whole numbers print
// without decimals, values of widely spread magnitude in scientific form, rows wider than
// 80 characters in "Columns a to b" blocks; every element is printed. CPUDoubleType in the
// double build; undefined: "[ Tensor (undefined) ]". The stream's format is restored after.
// (A grad_fn() prints as libtorch's: the shared_ptr's address; grad_fn()->name() is its name.)
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// ---- Tensor::item<T>() ----
namespace detail {
[[noreturn]] void fail_item_range(double value, const char* type);
}  // namespace detail

template <class T>
T Tensor::item() const {
  static_assert(std::is_arithmetic_v<T>, "item<T>(): T must be a number type (float, int64_t, bool, ...)");
  const real v = item();
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    // [lo, hi): the integers T holds, as doubles (2^digits is exact; max() may not be)
    const double hi = std::ldexp(1.0, std::numeric_limits<T>::digits);
    const double lo = std::is_signed_v<T> ? -hi : 0.0, tv = std::trunc(double(v));
    if (!(tv >= lo && tv < hi)) detail::fail_item_range(double(v), "an integer type");
    return static_cast<T>(tv);
  } else {
    return static_cast<T>(v);
  }
}

// Tensors with names, in a fixed order: a module's parameters and buffers
// (nn::Module::named_parameters), an optimizer's state, a checkpoint's contents.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

}  // namespace heed

#include "index_tensor.h"  // IndexTensor: after Tensor, which it needs
