// test_to_dot.cpp - heed::to_dot (autograd/engine/to_dot.h): the DOT text of a small known graph,
// node by node and edge by edge; leaf names and gradient norms; graphs without a graph.
#include <heed/autograd/engine/to_dot.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/unary.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>

#include "helpers.h"

using namespace heed;
using heed::test::error_of;

namespace {

int count(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return int(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

// y = sum(tanh(a * x + b)): a and b require grad, x does not.
struct SmallGraph {
  Tensor a = ones({2, 3}).requires_grad_(), b = full({2, 3}, 0.5).requires_grad_(), x = full({2, 3}, 2);
  Tensor y = sum(tanh(a * x + b));
};

}  // namespace

TEST_CASE("to_dot: nodes, labels and edges of a small graph") {
  SmallGraph g;
  const std::string dot = to_dot(g.y);
  CHECK(dot.rfind("digraph heed {", 0) == 0);
  CHECK(dot.substr(dot.size() - 2) == "}\n");
  // sum, tanh, add, mul and the two leaves: 6 numbered nodes, one grey point for x
  CHECK(count(dot, R"(\n  n\d+ \[)") == 6);
  CHECK(count(dot, R"(\n  c\d+ \[shape=point)") == 1);
  // numbered depth first from the root, inputs in argument order
  CHECK(dot.find("n0 [shape=ellipse, peripheries=2, label=\"sum\\n()\"]") != std::string::npos);
  CHECK(dot.find("n1 [shape=ellipse, label=\"tanh\\n(2,3)\"]") != std::string::npos);
  CHECK(dot.find("n2 [shape=ellipse, label=\"add\\n(2,3)\"]") != std::string::npos);
  CHECK(dot.find("n3 [shape=ellipse, label=\"mul\\n(2,3)\"]") != std::string::npos);
  CHECK(count(dot, R"(shape=box, style=filled, fillcolor="#dbe8fb", label="\(2,3\)\\nrequires grad")") == 2);
  // edges input -> op: 6, the two-input ops label theirs 0 and 1
  CHECK(count(dot, " -> ") == 6);
  CHECK(dot.find("n1 -> n0;") != std::string::npos);
  CHECK(dot.find("n2 -> n1;") != std::string::npos);
  CHECK(dot.find("n3 -> n2 [label=\"0\"") != std::string::npos);
  CHECK(dot.find("n5 -> n2 [label=\"1\"") != std::string::npos);  // b
  CHECK(dot.find("n4 -> n3 [label=\"0\"") != std::string::npos);  // a
  CHECK(dot.find("c0 -> n3 [label=\"1\"") != std::string::npos);  // x needs no grad
}

TEST_CASE("to_dot: leaf names, gradient norms after backward, title") {
  SmallGraph g;
  g.y.backward();
  const std::string dot =
      to_dot(g.y, DotOptions().names({{"weight", g.a}, {"bias", g.b}}).grad_norms(true).title("a \"small\" graph"));
  CHECK(dot.find("label=\"a \\\"small\\\" graph\"") != std::string::npos);
  // dL/db = 1 - tanh(2.5)^2 at each of 6 elements; dL/da = 2 (1 - tanh(2.5)^2)
  const double d = 1 - std::tanh(2.5) * std::tanh(2.5);
  char b_norm[32], a_norm[32];
  std::snprintf(b_norm, sizeof b_norm, "%.4g", d * std::sqrt(6.0));
  std::snprintf(a_norm, sizeof a_norm, "%.4g", 2 * d * std::sqrt(6.0));
  CHECK(dot.find(std::string("label=\"weight\\n(2,3)\\nrequires grad\\n|grad| = ") + a_norm + "\"") != std::string::npos);
  CHECK(dot.find(std::string("label=\"bias\\n(2,3)\\nrequires grad\\n|grad| = ") + b_norm + "\"") != std::string::npos);
  // the edges are still there after backward
  CHECK(count(dot, " -> ") == 6);
}

TEST_CASE("to_dot: shared inputs are drawn once; tensors without a graph; errors") {
  Tensor a = ones({3}).requires_grad_();
  Tensor y = sum(a * a);  // a feeds both inputs of mul: one leaf node, two edges
  const std::string dot = to_dot(y);
  CHECK(count(dot, R"(\n  n\d+ \[)") == 3);
  CHECK(dot.find("n2 -> n1 [label=\"0\"") != std::string::npos);
  CHECK(dot.find("n2 -> n1 [label=\"1\"") != std::string::npos);

  CHECK(to_dot(a).find("n0 [shape=box, peripheries=2, label=\"(3)\\nrequires grad\"]") != std::string::npos);
  const std::string constant = to_dot(ones({2}) * 3);
  CHECK(constant.find("no grad (no graph)") != std::string::npos);
  CHECK(count(constant, " -> ") == 0);

  CHECK(error_of([] { to_dot(Tensor()); }).find("to_dot") != std::string::npos);
  CHECK(error_of([&] { write_dot("/nonexistent-dir/g.dot", y); }).find("/nonexistent-dir/g.dot") != std::string::npos);
  const std::string path = "build/test_to_dot.dot";
  write_dot(path, y);
  std::ifstream f(path);
  CHECK(std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()) == dot);
  std::remove(path.c_str());
}
