// to_dot.h - draw the graph a tensor was computed through, as Graphviz DOT text
// (the idea of micrograd's draw_dot, Karpathy 2020).
//
// What is drawn is exactly what backward() walks (autograd/engine/node.h):
//   ellipse     one recorded op (Node::name(), e.g. "matmul"), with the shape of its output;
//               the root (the tensor passed in) has a double border
//   blue box    a leaf that requires grad (its AccumulateGrad node): its shape, the name
//               given in DotOptions::names (e.g. a model's named_parameters()), and after
//               backward, with DotOptions::grad_norms, the norm of its .grad()
//   grey point  an input that needs no gradient (data, a mask, a detached tensor): the
//               op's edge to it is null, so backward never goes there
//   arrow       input -> op, in the direction the forward pass ran (backward runs them
//               in reverse); an op with several inputs labels them 0, 1, ... in argument order
// Nodes are numbered in the order a depth-first walk from the root meets them, so the
// same graph always gives the same text.
//
// A tensor that requires no grad has no graph: its DOT has one box and no edges. The
// edges survive backward() (only the saved tensors are freed), so a graph can be drawn
// after backward, which is when gradient norms exist.
//
// Render with Graphviz:   dot -Tpng graph.dot -o graph.png
//
// Example:
//   Tensor loss = mse_loss(model->forward(x), y);
//   loss.backward();
//   write_dot("loss.dot", loss, DotOptions().names(model->named_parameters()).grad_norms(true));
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "../../core/arg.h"
#include "../../core/tensor.h"

namespace heed {

class DotOptions {
 public:
  // Labels for leaves, matched by identity (the same TensorImpl), e.g. named_parameters().
  HEED_ARG(NamedTensors, names);
  // Print ||leaf.grad()||_2 on every leaf that has a gradient (after backward).
  HEED_ARG(bool, grad_norms) = false;
  // The graph's title, drawn at the top.
  HEED_ARG(std::string, title);
};

// The DOT text of root's graph (a `digraph`). heed::Error naming to_dot for an undefined root.
std::string to_dot(const Tensor& root, const DotOptions& options = DotOptions());

// to_dot written to a file, atomically and into the file `path` names (core/atomic_file.h:
// a symlink is followed, a FIFO or device refused); heed::Error naming write_dot and the path
// when it cannot be written.
void write_dot(const std::string& path, const Tensor& root, const DotOptions& options = DotOptions());

}  // namespace heed
