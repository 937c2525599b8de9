// recompute.cpp - gradient checkpointing: one node whose backward re-runs the block.
//
//   forward
//     1. rng = get_rng_state()                 the numbers fn is about to draw
//     2. y = fn(x), recorded; read = the nodes of tensors fn read but did not make (x's,
//        captured parameters'); then y = y.detach(), which frees fn's graph
//     3. record ONE node, edges to read; saved: x (checked: node.h), fn, rng
//   backward (dy = dL/dy), undoing it:
//     2. y' = fn(x) with grad mode on and the generator set to rng (then put back); it must
//        read nothing outside `read`
//     1. the gradient dy sends through y''s graph to each node of `read`, taken there
//        (detail::gradients_at): it leaves through this node's edges, so the enclosing
//        pass, autograd::grad or backward(), routes it (no .grad() is written here)
#include "recompute.h"

#include <algorithm>
#include <unordered_set>

#include "../../core/error.h"
#include "../../core/random.h"
#include "engine.h"
#include "grad_mode.h"
#include "node.h"

namespace heed {
namespace {

// The generator set to `replay` for a scope, and the caller's stream restored after, so
// backward neither repeats nor skips numbers the program draws next.
class RngReplayGuard {
 public:
  explicit RngReplayGuard(const RngState& replay) : saved_(get_rng_state()) { set_rng_state(replay); }
  ~RngReplayGuard() { set_rng_state(saved_); }
  RngReplayGuard(const RngReplayGuard&) = delete;
  RngReplayGuard& operator=(const RngReplayGuard&) = delete;

 private:
  RngState saved_;
};

using NodeRefs = std::vector<std::shared_ptr<Node>>;

// y = fn(x) with grad mode on, and the nodes of what fn read (step 2): the nodes y's graph
// reaches through nodes fn recorded (detail::recorded_nodes), first reached first.
Tensor run_recorded(const CheckpointFn& fn, const std::vector<Tensor>& x, NodeRefs& read) {
  std::vector<const Node*> made;
  struct Log {  // connect() lists the nodes fn records; put back even if fn throws
    std::vector<const Node*>* outer = detail::recorded_nodes;
    ~Log() { detail::recorded_nodes = outer; }
  } log;
  detail::recorded_nodes = &made;
  Tensor y;
  {
    AutoGradMode grad_on(true);
    y = fn(x);
  }
  HEED_CHECK(y.defined(), "checkpoint", "fn returned an undefined tensor");
  const std::unordered_set<const Node*> inside(made.begin(), made.end());
  std::unordered_set<const Node*> seen;
  NodeRefs stack;
  if (auto root = detail::producer_of(y)) stack.push_back(std::move(root));
  while (!stack.empty()) {
    std::shared_ptr<Node> n = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(n.get()).second) continue;
    if (!inside.count(n.get())) {
      read.push_back(std::move(n));
      continue;
    }
    for (const auto& e : n->next)
      if (e && !seen.count(e.get())) stack.push_back(e);
  }
  return y;
}

struct Recompute {
  CheckpointFn fn;
  SavedTensors x;  // the inputs, with their graph (their producers are among the edges)
  RngState rng;    // the generator as fn first saw it

  void operator()(const Tensor& dy, Grads& g) const {
    NodeRefs read;
    Tensor y;
    {
      RngReplayGuard replay(rng);  // 2.
      y = run_recorded(fn, std::vector<Tensor>(x.begin(), x.end()), read);
    }
    HEED_CHECK(y.shape() == dy.shape(), "checkpoint", "the re-run of fn gave shape ", y.shape(),
               " but the forward gave ", dy.shape(), "; fn must compute the same thing twice");
    for (const auto& r : read) {
      bool known = false;
      for (int i = 0; i < g.size() && !known; ++i) known = g.edge(i) == r;
      HEED_CHECK(known, "checkpoint", "the re-run of fn read a tensor that requires grad (shape ",
                 r->out_shape, ", made by '", r->name(), "') that the forward run did not read; "
                 "fn must compute the same thing twice");
    }
    detail::gradients_to_edges(y, dy, g);  // 1.
  }
};

}  // namespace

Tensor checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i)
    HEED_CHECK(inputs[i].defined(), "checkpoint", "input ", i, " is an undefined tensor");
  if (!GradMode::enabled()) return fn(inputs);  // nothing would be recorded anyway
  RngState rng = get_rng_state();               // 1.
  NodeRefs read;
  // 2. y may be one of the inputs or share its storage: a new handle keeps the node off it.
  const Tensor y = run_recorded(fn, inputs, read).detach();
  if (read.empty()) return y;  // fn read nothing that requires grad
  Recompute backward{fn, {}, std::move(rng)};  // 3.
  backward.x.reserve(inputs.size());
  for (const Tensor& t : inputs) backward.x.push_back(t);
  auto node = std::allocate_shared<FunctionNode<Recompute>>(CachingAllocator<FunctionNode<Recompute>>(),
                                                            "checkpoint", std::move(backward));
  node->double_backward = true;  // under create_graph its pass records (gradients_to_edges)
  connect(node, y, inputs.data(), static_cast<int>(inputs.size()));
  // edges to what fn captured: the nodes read that are not an input's
  for (auto& r : read)
    if (std::find(node->next.begin(), node->next.end(), r) == node->next.end()) node->next.push_back(std::move(r));
  return y;
}

}  // namespace heed
