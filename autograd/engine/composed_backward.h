// composed_backward.h - the double backward of a fused op, from its composed twin.
//
// A fused op (layer norm, cross entropy, an LSTM cell) has a hand-written first-order
// backward and a twin composed from heed ops that computes the same function (each tested
// against the other). Under create_graph its backward calls composed_gradients: the twin is
// run again on the saved inputs, with grad mode on, and differentiated against dy by a
// recorded pass that stops at the inputs' nodes (detail::gradients_at, engine.h), so the
// gradients are differentiable in the inputs and in dy. The first-order pass keeps the fused kernel.
//
//   if (g.create_graph())
//     return detail::composed_gradients([&](const std::vector<Tensor>& in) {
//       return layer_norm_reference(in[0], shape, in[1], in[2], eps); }, {x, weight, bias}, dy, g);
#pragma once
#include <functional>
#include <vector>

#include "node.h"

namespace heed {
namespace detail {

// g[i] = d <twin(inputs), dy> / d inputs[i] for every i with g.needs(i), recorded.
void composed_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& twin,
                        const std::vector<Tensor>& inputs, const Tensor& dy, Grads& g);

}  // namespace detail
}  // namespace heed
