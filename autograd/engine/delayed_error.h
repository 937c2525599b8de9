// delayed_error.h - what a create_graph pass does with an op whose backward is not
// differentiable (a fused kernel): PyTorch's DelayedError.
//
// The op's first-order backward runs as usual (grad mode off), so a create_graph pass
// through it still computes every first-order gradient. Each gradient it produces then gets
// a DelayedError node as grad_fn, with edges to what the gradient depends on (dy's producer
// and the op's inputs' producers): nothing happens unless a later pass differentiates
// through that gradient, and then the pass raises heed::Error naming the op and the
// differentiable alternative, instead of silently treating the gradient as a constant.
#pragma once
#include "node.h"

namespace heed {

// The node a gradient of op `op` gets; apply() raises.
struct DelayedError final : Node {
  explicit DelayedError(const char* op) : op(op) {}
  const char* op_name() const override { return "DelayedError"; }
  void apply(const Tensor& grad_out, Grads& g) override;
  const char* op;  // the op whose backward made the gradient
};

namespace detail {
// Give each defined slots[i] of node n (run on dy) a DelayedError grad_fn, when what it
// depends on requires grad.
void mark_not_differentiable(const Node& n, const Tensor& dy, TensorVec& slots);
}  // namespace detail

}  // namespace heed
