// engine.h - the entry points of the backward pass (engine.cpp). Tensor::backward() is
// declared with Tensor (core/tensor.h); here are the other two: heed::autograd::grad, and
// detail::gradients_at, the pass a node's backward runs inside the pass running it.
//
// autograd::grad: gradients returned instead of accumulated (libtorch's
// torch::autograd::grad), the way to take a gradient of a gradient.
//
//   Tensor y = (x * x * x).sum();                                      // x: (3), requires grad
//   Tensor dx = heed::autograd::grad({y}, {x}, {}, std::nullopt, true)[0];   // 3 x^2, differentiable
//   Tensor d2 = heed::autograd::grad({dx.sum()}, {x})[0];                      // 6 x
//
// outputs       the tensors to differentiate (each requires grad)
// inputs        the tensors to differentiate with respect to: leaves or not (a gradient
//               penalty differentiates a critic with respect to its interpolated input)
// grad_outputs  dL/d(output i), one per output; empty (or an undefined entry) means 1 for a
//               one-element output
// retain_graph  keep the graph for another pass; defaults to create_graph
// create_graph  record the pass, so that the returned gradients are differentiable
//               (engine.cpp; an op whose backward is not differentiable raises when its
//               gradient is differentiated, naming the op and the alternative)
// allow_unused  an input the outputs do not depend on gets an undefined Tensor instead of
//               a heed::Error
// Returns dL/d(input i) for each input. No tensor's .grad() changes. An input that the
// graph reaches but that received no gradient gets zeros.
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "../../core/tensor.h"

namespace heed {

class Grads;  // node.h

namespace autograd {

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {},
                         std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false, bool allow_unused = false);

}  // namespace autograd

namespace detail {
// For a backward that runs a pass of its own (checkpoint's re-run, a composed twin): y was
// computed again, with grad mode on, from tensors whose nodes are `at` (nodes of the
// enclosing graph, or stand-in leaves). Returns, per entry of `at`, the gradient dy sends
// through y's graph to that node, taken there: the nodes of `at` and everything beyond
// them are the enclosing pass's and are neither run nor counted, so no .grad() changes
// and no gradient reaches a leaf twice. Undefined for a null entry, a node y's graph does
// not reach, and a repeated node (the first entry for a node gets its whole gradient: an
// op given one tensor twice). Under create_graph the pass records, and the gradients are
// differentiable.
std::vector<Tensor> gradients_at(const Tensor& y, const Tensor& dy,
                                 const std::vector<std::shared_ptr<Node>>& at, bool create_graph);
// The same with at = the node's edges (g.edge(i)), filling g[i] for each i with g.needs(i)
// (zeros where undefined); create_graph as the pass.
void gradients_to_edges(const Tensor& y, const Tensor& dy, Grads& g);
}  // namespace detail

}  // namespace heed
