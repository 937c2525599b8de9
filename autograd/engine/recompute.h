// recompute.h - gradient checkpointing (Chen et al. 2016, "Training Deep Nets with
// Sublinear Memory Cost"), as torch.utils.checkpoint. (Not optim/checkpoint_file.h, which saves
// a model to disk.)
//
//   y = checkpoint(fn, {x1, x2, ...})
//
//   forward   y = fn(x) runs once, recorded, to learn which tensors that require grad fn
//             reads besides x (the parameters it captures); then its graph and
//             activations are freed, and ONE node is recorded for all of fn, with edges to
//             x and to those captured tensors. Kept: x (by reference), fn, and the random
//             generator's state.
//   backward  given dL/dy, that node re-runs fn on x with grad mode on and the saved
//             generator state (so dropout draws the same mask), and sends dL/dy through the
//             recomputed graph as far as x and the captured tensors, whose gradients then
//             leave through the node's edges like any op's (as torch.utils.checkpoint's
//             non-reentrant variant): autograd::grad({L}, {x, W}) gets dL/dW for a W fn
//             captured, and writes no .grad().
//
// Memory: a stack of N checkpointed blocks keeps N block inputs instead of every
// activation; one block's activations are alive at a time, in the forward (the recorded
// run) and in backward (the re-run). The price is one extra forward pass.
// tests/test_recompute.cpp measures the saving with alloc::PeakScope.
//
// Double backward: under create_graph the re-run's pass is recorded, so dL/dx and dL/dW are
// differentiable in x and W (a fused op inside fn raises naming itself, as anywhere).
// y requires grad exactly when fn's output does (a captured parameter is enough).
// Rules for fn:
//   - fn must compute the same function when re-run (same shapes, same modules, the same
//     train/eval state); its random numbers are replayed, anything else is not. A re-run
//     that reads a tensor requiring grad the first run did not read is a heed::Error;
//   - one output; stack several with heed::stack/cat if needed.
// Checkpoints nest (fn may call checkpoint itself).
//
// Example (each block's activations are recomputed in backward):
//   for (auto& block : blocks)
//     h = checkpoint([&](const std::vector<Tensor>& x) { return block->forward(x[0]); }, {h});
#pragma once
#include <functional>
#include <vector>

#include "../../core/tensor.h"

namespace heed {

using CheckpointFn = std::function<Tensor(const std::vector<Tensor>&)>;

// y = fn(inputs), without keeping fn's activations for backward (see above).
Tensor checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs);

}  // namespace heed
