// to_dot.cpp - the graph of a tensor as Graphviz DOT (see to_dot.h for what is drawn).
#include "to_dot.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "../../core/atomic_file.h"
#include "../../core/error.h"
#include "node.h"

namespace heed {

namespace {

std::string shape_text(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

// A DOT string literal's contents (the DOT language: within a quoted string, \" is a quote;
// Graphviz labels read \\ as a backslash and \n as a line break): quotes and backslashes
// escaped, a newline written as \n, other control characters as spaces.
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) out += ' ';
    else out += c;
  }
  return out;
}

double l2_norm(const Tensor& t) {
  double sum = 0;
  const real* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) sum += double(p[i]) * p[i];
  return std::sqrt(sum);
}

// The label of a leaf box: "name", the shape, "requires grad", and |grad| when asked.
std::string leaf_label(const TensorImpl* leaf, const DotOptions& o) {
  std::string label;
  for (const auto& [name, t] : o.names())
    if (t.impl() == leaf) { label = escape(name) + "\\n"; break; }
  label += escape(shape_text(leaf->shape)) + "\\nrequires grad";
  if (o.grad_norms() && leaf->leaf && leaf->leaf->grad.defined()) {
    char b[48];
    std::snprintf(b, sizeof b, "\\n|grad| = %.4g", l2_norm(leaf->leaf->grad));
    label += b;
  }
  return label;
}

}  // namespace

std::string to_dot(const Tensor& root, const DotOptions& o) {
  HEED_CHECK(root.defined(), "to_dot", "the root tensor is undefined");
  std::ostringstream out;
  out << "digraph heed {\n  rankdir=LR;\n  graph [fontname=\"DejaVu Sans\"];\n  node [fontname=\"DejaVu Sans\", fontsize=11];\n"
      << "  edge [fontname=\"DejaVu Sans\"];\n";
  if (!o.title().empty()) out << "  labelloc=t;\n  label=\"" << escape(o.title()) << "\";\n";

  // A leaf or a tensor that needs no grad: one box, no graph.
  std::shared_ptr<Node> top = root.grad_fn();
  if (!top) {
    std::string label = root.requires_grad() ? leaf_label(root.impl(), o)
                                             : escape(shape_text(root.shape())) + "\\nno grad (no graph)";
    out << "  n0 [shape=box, peripheries=2, label=\"" << label << "\"];\n}\n";
    return out.str();
  }

  // 1. Number every node reachable from the root in depth-first preorder, inputs in
  //    argument order (a node met again through another path keeps its first number).
  std::unordered_map<const Node*, int> id;
  std::vector<const Node*> order, stack{top.get()};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (id.count(n)) continue;
    id[n] = int(order.size());
    order.push_back(n);
    for (auto it = n->next.rbegin(); it != n->next.rend(); ++it)  // reversed: input 0 is popped first
      if (*it && !id.count(it->get())) stack.push_back(it->get());
  }

  // 2. One DOT node per graph node; a grey point per input that needs no grad.
  int constants = 0;
  std::ostringstream edges;
  for (const Node* n : order) {
    const int i = id[n];
    if (auto acc = dynamic_cast<const AccumulateGrad*>(n)) {
      out << "  n" << i << " [shape=box, style=filled, fillcolor=\"#dbe8fb\", label=\"" << leaf_label(acc->leaf.get(), o)
          << "\"];\n";
      continue;
    }
    out << "  n" << i << " [shape=ellipse" << (i == 0 ? ", peripheries=2" : "") << ", label=\"" << escape(n->op_name())
        << "\\n" << escape(shape_text(n->out_shape)) << "\"];\n";
    for (size_t k = 0; k < n->next.size(); ++k) {
      std::string from;
      if (n->next[k]) {
        from = "n" + std::to_string(id[n->next[k].get()]);
      } else {
        from = "c" + std::to_string(constants++);
        out << "  " << from << " [shape=point, width=0.08, color=\"#999999\", xlabel=\"no grad\", fontsize=9, fontcolor=\"#777777\"];\n";
      }
      edges << "  " << from << " -> n" << i;
      if (n->next.size() > 1) edges << " [label=\"" << k << "\", fontsize=9]";
      edges << ";\n";
    }
  }
  out << edges.str() << "}\n";
  return out.str();
}

void write_dot(const std::string& path, const Tensor& root, const DotOptions& options) {
  write_file_atomically("write_dot", path, to_dot(root, options));
}

}  // namespace heed
