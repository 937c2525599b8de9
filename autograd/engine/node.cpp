// node.cpp - building the graph: connecting an op's node to its inputs' producers, the
// leaves' AccumulateGrad nodes, the saved-tensor check, and freeing long graphs without
// recursion. Running it backward is engine.cpp.
#include <cstring>
#include <sstream>
#include <vector>

#include "../../core/error.h"
#include "anomaly_mode.h"
#include "node.h"

namespace heed {

// The leaf's AccumulateGrad (GradState::accumulator), made on first use and shared by
// every graph that reaches the leaf.
static std::shared_ptr<Node> accumulator_of(const std::shared_ptr<TensorImpl>& leaf) {
  GradState& st = *leaf->leaf;
  std::lock_guard<std::mutex> lock(st.mu);  // two threads may record ops on one leaf at once
  if (auto acc = st.accumulator.lock()) return acc;
  auto acc = std::allocate_shared<AccumulateGrad>(CachingAllocator<AccumulateGrad>(), leaf);
  acc->out_shape = leaf->shape;
  st.accumulator = acc;
  return acc;
}

std::shared_ptr<Node> detail::producer_of(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return nullptr;
  if (t.grad_fn()) return t.grad_fn();
  return accumulator_of(t.impl_ptr());
}

static const Tensor& tensor_of(const Tensor& t) { return t; }
static const Tensor& tensor_of(const InputRef& t) { return *t; }

// Which of the op's tensors a saved one is, by storage (a view or detach() of input i is input
// i): for the message of SavedTensor::check.
template <class Input>
static int position_of(const Tensor& saved, const Tensor& out, const Input* inputs, int n) {
  if (!saved.defined()) return SavedTensor::kOther;
  const Storage* st = saved.impl()->storage.get();
  for (int i = 0; i < n; ++i) {
    const Tensor& x = tensor_of(inputs[i]);
    if (x.defined() && x.impl()->storage.get() == st) return i;
  }
  return out.impl()->storage.get() == st ? SavedTensor::kOutput : SavedTensor::kOther;
}

template <class Input>
static void connect_inputs(std::shared_ptr<Node> node, const Tensor& out, const Input* inputs, int n) {
  node->next.reserve(n);
  for (int i = 0; i < n; ++i) node->next.push_back(detail::producer_of(tensor_of(inputs[i])));
  for (SavedTensor* s = node->saved_tensors; s; s = s->next_saved())
    s->where = position_of(*s, out, inputs, n);
  node->out_shape = out.shape();
  if (AnomalyMode::enabled()) {
    node->anomaly_index = detail::next_anomaly_index();
    detail::check_forward_anomaly(node->op_name(), node->anomaly_index, out);
  }
  if (detail::recorded_nodes) detail::recorded_nodes->push_back(node.get());
  out.impl()->grad_fn = std::move(node);  // out.requires_grad() is now true
}

void connect(std::shared_ptr<Node> node, const Tensor& out, const InputRef* inputs, int n) {
  connect_inputs(std::move(node), out, inputs, n);
}

void connect(std::shared_ptr<Node> node, const Tensor& out, const Tensor* inputs, int n) {
  connect_inputs(std::move(node), out, inputs, n);
}

static_assert(sizeof(Node) <= 160, "a node outgrew its three 64-byte blocks (node.h)");

void NodeList::grow() {
  CachingAllocator<Edge> alloc;
  const std::uint32_t cap = cap_ * 2;
  Edge* p = alloc.allocate(cap);
  for (std::uint32_t i = 0; i < cap; ++i) new (p + i) Edge(i < n_ ? std::move(data()[i]) : Edge());
  Edge* old = heap_;
  const std::uint32_t old_cap = cap_;
  heap_ = p;
  cap_ = cap;
  if (old) {
    for (std::uint32_t i = 0; i < old_cap; ++i) old[i].~Edge();
    alloc.deallocate(old, old_cap);
  }
}

void NodeList::clear() {
  for (Edge& e : inline_) e.reset();
  if (heap_) {
    for (std::uint32_t i = 0; i < cap_; ++i) heap_[i].~Edge();
    CachingAllocator<Edge>().deallocate(heap_, cap_);
    heap_ = nullptr;
    cap_ = kInline;
  }
  n_ = 0;
}

void SavedTensor::fail_modified(const char* op) const {
  std::ostringstream what;
  if (where >= 0) what << "input " << where << " of '" << op << "'";
  else if (where == kOutput) what << "output 0 of '" << op << "'";
  else what << "a tensor saved by '" << op << "'";
  fail(op, "one of the variables needed for gradient computation has been modified by an "
           "inplace operation: ", what.str(), " (shape ", shape(), ") is at version ", version(),
       "; expected version ", version_, ". Writes since the forward (fill_, add_, copy_, an "
       "optimizer step, through a view or detach()) would make this gradient wrong");
}

template <class Input>
static void check_captures_of(const char* op, const void* closure, std::size_t bytes,
                              const SavedTensor* saved, const Input* inputs, int n) {
  const auto* words = static_cast<const unsigned char*>(closure);
  for (std::size_t at = 0; at + sizeof(Tensor) <= bytes; at += alignof(void*)) {
    for (int i = 0; i < n; ++i) {
      const Tensor& x = tensor_of(inputs[i]);
      // A copy of x has x's bytes: its TensorImpl's address, then its control block's.
      if (!x.defined() || std::memcmp(words + at, static_cast<const void*>(&x), sizeof(Tensor)) != 0) continue;
      bool is_saved = false;  // a SavedTensor's handle starts with its TensorImpl address
      for (const SavedTensor* s = saved; s && !is_saved; s = s->next_saved())
        is_saved = static_cast<const void*>(s) == static_cast<const void*>(words + at);
      HEED_CHECK(is_saved, op, "the backward closure holds input ", i, " (shape ", x.shape(),
                 ") as a plain Tensor: capture it as SavedTensor(x), so that an in-place "
                 "write to it before backward is caught (node.h), or capture only what it "
                 "reads (its shape)");
    }
  }
}

void detail::check_captures(const char* op, const void* closure, std::size_t bytes,
                            const SavedTensor* saved, const InputRef* inputs, int n) {
  check_captures_of(op, closure, bytes, saved, inputs, n);
}

void detail::check_captures(const char* op, const void* closure, std::size_t bytes,
                            const SavedTensor* saved, const Tensor* inputs, int n) {
  check_captures_of(op, closure, bytes, saved, inputs, n);
}

[[noreturn]] void fail_released(const char* op) {
  fail(op, "backward through this graph a second time, but its saved tensors were freed "
           "after the first backward; pass retain_graph=true to the first backward()");
}

// Destroying a long chain (an RNN unrolled over 100k steps) recursively would overflow
// the stack, so a Node hands the children it solely owns to a per-thread list that the
// outermost destructor empties in a loop.
Node::~Node() {
  static thread_local std::vector<std::shared_ptr<Node>> orphans;
  static thread_local bool draining = false;
  for (auto& e : next)
    if (e && e.use_count() == 1) orphans.push_back(std::move(e));
  next.clear();
  if (draining) return;
  draining = true;
  while (!orphans.empty()) {
    std::shared_ptr<Node> n = std::move(orphans.back());
    orphans.pop_back();
    n.reset();  // its destructor may push more orphans
  }
  draining = false;
}

}  // namespace heed
