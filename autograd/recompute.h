// recompute.h - gradient checkpointing (Chen et al. 2016, "Training Deep Nets with
// Sublinear Memory Cost"), as torch.utils.checkpoint. (Not optim/checkpoint_file.h, which saves
// a model to disk.)
//
//   y = checkpoint(fn, {x1, x2, ...})
//
//   forward   y = fn(x) runs with grad mode off: none of fn's intermediate activations is
//             kept, only its inputs x (by reference) and the random generator's state.
//             ONE node is recorded for all of fn.
//   backward  given dL/dy, that node re-runs fn on detached copies of x with grad mode on
//             and the saved generator state (so dropout draws the same mask), then
//             back-propagates dL/dy through the recomputed graph, and returns dL/dx.
//
// Memory: a stack of N checkpointed blocks keeps N block inputs instead of every
// activation, and recomputes one block's activations at a time in backward; the price is
// one extra forward pass. tests/test_recompute.cpp measures the saving with
// alloc::PeakScope.
//
// Parameters fn captures (a module's weights, not passed in x) get their gradients too:
// they are leaves of the recomputed graph, so the inner backward adds into their .grad()
// directly. That is why the node is recorded whenever grad mode is on, even when no x
// requires grad (torch's older reentrant checkpoint returns an output without grad in
// that case, and the weights silently get none). Consequence: y always requires grad
// under grad mode. Rules for fn:
//   - a tensor fn reads that carries gradient from elsewhere in the graph (a non-leaf)
//     must be passed in x, not captured: its gradient has to leave through this node;
//   - fn must compute the same function when re-run (same shapes, same modules, the same
//     train/eval state); its random numbers are replayed, anything else is not;
//   - one output; stack several with heed::stack/cat if needed.
// Checkpoints nest (fn may call checkpoint itself), and fn's inner backward is an ordinary
// Tensor::backward() called from inside the outer one (the engine keeps its state per call).
//
// Example (each block's activations are recomputed in backward):
//   for (auto& block : blocks)
//     h = checkpoint([&](const std::vector<Tensor>& x) { return block->forward(x[0]); }, {h});
#pragma once
#include <functional>
#include <vector>

#include "../core/tensor.h"

namespace heed {

using CheckpointFn = std::function<Tensor(const std::vector<Tensor>&)>;

// y = fn(inputs), without keeping fn's activations for backward (see above).
Tensor checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs);

}  // namespace heed
