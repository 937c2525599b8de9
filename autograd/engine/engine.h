// engine.h - heed::autograd::grad: gradients returned instead of accumulated (libtorch's
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
#include <optional>
#include <vector>

#include "../../core/tensor.h"

namespace heed {
namespace autograd {

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {},
                         std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false, bool allow_unused = false);

}  // namespace autograd
}  // namespace heed
