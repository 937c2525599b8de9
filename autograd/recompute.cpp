// recompute.cpp - gradient checkpointing: one node whose backward re-runs the block.
//
//   forward
//     1. rng = get_rng_state()                 the numbers fn is about to draw
//     2. y = fn(x) under NoGradGuard           nothing inside fn is recorded or saved
//     3. record ONE node, edges to x; saved: x (detached: data only), fn, rng
//   backward (dy = dL/dy), undoing it:
//     3. x' = fresh leaves sharing x's storage, requiring grad where x needed it
//     2. y' = fn(x') with grad mode on and the generator set to rng (then put back)
//     1. y'.backward(dy): parameters fn captured accumulate their .grad() here;
//        dL/dx = x'.grad(), handed back to the outer engine
#include "recompute.h"

#include "../core/error.h"
#include "../core/random.h"
#include "grad_mode.h"
#include "node.h"

namespace heed {
namespace {

// Grad mode on for a scope: the engine runs backward closures with it off.
class EnableGradGuard {
 public:
  EnableGradGuard() : prev_(GradMode::enabled()) { GradMode::set_enabled(true); }
  ~EnableGradGuard() { GradMode::set_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

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

struct Recompute {
  CheckpointFn fn;
  SavedTensors x;          // the inputs' data, detached (checked: node.h)
  RngState rng;           // the generator as fn first saw it

  void operator()(const Tensor& dy, Grads& g) const {
    std::vector<Tensor> leaves(x.size());  // 3.
    for (size_t i = 0; i < x.size(); ++i) {
      leaves[i] = x[i].detach();
      if (g.needs(int(i))) leaves[i].requires_grad_();
    }
    Tensor y;
    {
      EnableGradGuard grad_on;  // 2.
      RngReplayGuard replay(rng);
      y = fn(leaves);
    }
    HEED_CHECK(y.shape() == dy.shape(), "checkpoint", "the re-run of fn gave shape ", y.shape(),
               " but the forward gave ", dy.shape(), "; fn must compute the same thing twice");
    if (y.requires_grad()) y.backward(dy);  // 1. (no grad path at all: every dL/dx is 0)
    for (size_t i = 0; i < x.size(); ++i)
      if (g.needs(int(i))) g[int(i)] = leaves[i].grad().defined() ? leaves[i].grad() : zeros(x[i].shape());
  }
};

}  // namespace

Tensor checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i)
    HEED_CHECK(inputs[i].defined(), "checkpoint", "input ", i, " is an undefined tensor");
  if (!GradMode::enabled()) return fn(inputs);  // nothing would be recorded anyway
  RngState rng = get_rng_state();               // 1.
  Tensor y;
  {
    NoGradGuard no_grad;  // 2.
    y = fn(inputs);
  }
  HEED_CHECK(y.defined(), "checkpoint", "fn returned an undefined tensor");
  // y may be one of the inputs or share its storage: a new handle keeps the node off it.
  y = y.detach();
  Recompute backward{fn, {}, std::move(rng)};  // 3.
  backward.x.reserve(inputs.size());
  for (const Tensor& t : inputs) backward.x.push_back(t.detach());
  // record() would skip the node when no input requires grad; captured parameters still need it.
  auto node = std::allocate_shared<FunctionNode<Recompute>>(CachingAllocator<FunctionNode<Recompute>>(),
                                                            "checkpoint", std::move(backward));
  node->calls_backward = true;  // the engine's rule for post-accumulate hooks (engine.cpp)
  connect(std::move(node), y, inputs.data(), static_cast<int>(inputs.size()));
  return y;
}

}  // namespace heed
