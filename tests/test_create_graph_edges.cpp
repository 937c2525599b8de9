// test_create_graph_edges.cpp - a create_graph pass computes the same first-order gradients
// as a plain pass, also at edge points: 0 and -0, +-inf, NaN, large |x|, a zero row, ties,
// an exponent of 0. Each op's create_graph branch is written from heed ops (so it can be
// differentiated again) and its plain branch from a kernel; where the formula has a 0 * inf
// that the kernel masks (d/dx x^0 at x = 0, a zero row's norm), the composed form must mask
// it too rather than give NaN.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/linear_attention.h>
#include <heed/autograd/ops/pow.h>
#include <heed/autograd/engine/engine.h>
#include <heed/autograd/ops/layer_norm.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/loss.h>
#include <heed/autograd/ops/norm.h>
#include <heed/autograd/ops/normalize.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/smooth_l1_loss.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/trig.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// d sum(f(inputs) * w) / d inputs, w fixed weights, by a plain pass or a create_graph pass.
std::vector<Tensor> first_order(const Fn& f, const std::vector<Tensor>& values, bool create_graph) {
  std::vector<Tensor> in;
  for (const Tensor& v : values) in.push_back(v.detach().clone().requires_grad_());
  const Tensor y = f(in);
  Tensor w = empty(y.shape());
  for (int64_t i = 0; i < w.numel(); ++i) w.data()[i] = real(0.5 + 0.25 * (i % 5));
  return autograd::grad({sum(y * w)}, in, {}, std::nullopt, create_graph, /*allow_unused=*/true);
}

void check_same_gradients(const std::string& name, const Fn& f, const std::vector<Tensor>& values) {
  CAPTURE(name);
  const std::vector<Tensor> plain = first_order(f, values, false), graph = first_order(f, values, true);
  for (size_t k = 0; k < values.size(); ++k) {
    CAPTURE(k);
    REQUIRE(plain[k].defined() == graph[k].defined());
    if (!plain[k].defined()) continue;
    REQUIRE(plain[k].shape() == graph[k].shape());
    // both NaN, the same infinity, or within 1e-4 (the two passes round differently)
    CAPTURE(values[k]); CAPTURE(plain[k]); CAPTURE(graph[k]);
    CHECK(test::allclose(graph[k], plain[k], 1e-4, 1e-4));
  }
}

Tensor vec(const std::vector<double>& v, const Shape& s) {
  Tensor t = empty(s);
  for (size_t i = 0; i < v.size(); ++i) t.data()[i] = real(v[i]);
  return t;
}

const std::vector<double> kEdges = {0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, 30.0, -30.0, kInf, -kInf, kNaN};

}  // namespace

TEST_CASE("create_graph: unary ops' first-order gradients at edge points equal the plain pass's") {
  const Tensor x = vec(kEdges, {int64_t(kEdges.size())});
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> ops = {
      {"exp", [](const Tensor& t) { return exp(t); }},
      {"log", [](const Tensor& t) { return log(t); }},
      {"log1p", [](const Tensor& t) { return log1p(t); }},
      {"sqrt", [](const Tensor& t) { return sqrt(t); }},
      {"tanh", [](const Tensor& t) { return tanh(t); }},
      {"sigmoid", [](const Tensor& t) { return sigmoid(t); }},
      {"relu", [](const Tensor& t) { return relu(t); }},
      {"gelu", [](const Tensor& t) { return gelu(t); }},
      {"gelu tanh", [](const Tensor& t) { return gelu(t, "tanh"); }},
      {"elu", [](const Tensor& t) { return elu(t, 0.7); }},
      {"abs", [](const Tensor& t) { return abs(t); }},
      {"neg", [](const Tensor& t) { return neg(t); }},
      {"sin", [](const Tensor& t) { return sin(t); }},
      {"cos", [](const Tensor& t) { return cos(t); }},
      {"clamp", [](const Tensor& t) { return clamp(t, -1, 1); }},
      {"clamp_min", [](const Tensor& t) { return clamp_min(t, 0); }},
      {"clamp_max", [](const Tensor& t) { return clamp_max(t, 0); }},
      {"x / 0", [](const Tensor& t) { return div(t, zeros(t.shape())); }},
      {"1 / x", [](const Tensor& t) { return div(ones(t.shape()), t); }},
      {"x * x", [](const Tensor& t) { return t * t; }},
  };
  for (const auto& [name, op] : ops)
    check_same_gradients(name, [op = op](const std::vector<Tensor>& in) { return op(in[0]); }, {x});
  for (double p : {0.0, 1.0, 0.5, 2.0, -1.0, -0.5, 1.5, 3.0, -2.0})
    check_same_gradients("pow(x, " + std::to_string(p) + ")",
                         [p](const std::vector<Tensor>& in) { return pow(in[0], real(p)); }, {x});
}

TEST_CASE("create_graph: pow with a tensor exponent at edge points equals the plain pass") {
  std::vector<double> xs, ps;
  for (double b : {0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -2.0})
    for (double p : {0.0, 1.0, 0.5, 2.0, -1.0, -0.5, 1.5, 3.0, -2.0}) xs.push_back(b), ps.push_back(p);
  const Shape s{int64_t(xs.size())};
  check_same_gradients("pow(x, p)", [](const std::vector<Tensor>& in) { return pow(in[0], in[1]); },
                       {vec(xs, s), vec(ps, s)});
}

TEST_CASE("create_graph: norms, normalize, softmax and reductions with zero rows, ties and -inf") {
  // rows: zero, one nonzero, ties, mixed signs
  const Tensor rows = vec({0, 0, 0, 0, 3, 0, 2, -2, 2, 1, -2, 0.5}, {4, 3});
  for (double p : {2.0, 1.0, 3.0, 0.5, kInf, -kInf, 0.0}) {
    check_same_gradients("norm p = " + std::to_string(p),
                         [p](const std::vector<Tensor>& in) { return norm(in[0], p, 1); }, {rows});
    if (p >= 1 && !std::isinf(p))
      check_same_gradients("normalize p = " + std::to_string(p),
                           [p](const std::vector<Tensor>& in) { return normalize(in[0], p, 1); }, {rows});
  }
  const Tensor with_inf = vec({0, -kInf, 1, -kInf, -kInf, 2, 5, 5, 5, 1, 2, 3}, {4, 3});
  check_same_gradients("softmax", [](const std::vector<Tensor>& in) { return softmax(in[0], 1); }, {with_inf});
  check_same_gradients("log_softmax", [](const std::vector<Tensor>& in) { return log_softmax(in[0], 1); }, {rows});
  check_same_gradients("max", [](const std::vector<Tensor>& in) { return max(in[0]); }, {rows});
  check_same_gradients("min", [](const std::vector<Tensor>& in) { return min(in[0]); }, {rows});
  check_same_gradients("var", [](const std::vector<Tensor>& in) { return var(in[0], 1); }, {rows});
  check_same_gradients("layer_norm", [](const std::vector<Tensor>& in) {
    return layer_norm(in[0], Shape{3});
  }, {rows});
}

TEST_CASE("create_graph: losses at their edge points equal the plain pass") {
  // x - y at 0, at the smooth L1 / Huber switch (+-1 and +-0.5), large, and a -inf logit
  const Tensor x = vec({0, 1, -1, 0.5, -0.5, 30, 2, -kInf, 3}, {3, 3});
  const Tensor y = vec({0, 0, 0, 0, 0, 0, 1, 1, 1}, {3, 3});
  const IndexTensor cls({0, 2, 1}, {3});
  for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    CAPTURE(int(r));
    const std::vector<Tensor> xy = {x, y};
    check_same_gradients("mse_loss", [r](const std::vector<Tensor>& in) { return mse_loss(in[0], in[1], r); }, xy);
    check_same_gradients("smooth_l1_loss", [r](const std::vector<Tensor>& in) {
      return smooth_l1_loss(in[0], in[1], r, 1.0);
    }, xy);
    check_same_gradients("huber_loss", [r](const std::vector<Tensor>& in) {
      return huber_loss(in[0], in[1], r, 0.5);
    }, xy);
    const Tensor logits = vec({0, -kInf, 1, 2, 2, 2, -30, 30, 0}, {3, 3});
    check_same_gradients("cross_entropy_loss", [r, cls](const std::vector<Tensor>& in) {
      return cross_entropy_loss(in[0], cls, Tensor(), r, -100, 0.0);
    }, {logits});
    check_same_gradients("cross_entropy_loss smoothed", [r, cls](const std::vector<Tensor>& in) {
      return cross_entropy_loss(in[0], cls, Tensor(), r, -100, 0.1);
    }, {vec({0, -5, 1, 2, 2, 2, -30, 30, 0}, {3, 3})});
  }
}

TEST_CASE("create_graph: a fused op given one tensor twice, or an input made from another, counts each path once") {
  // The composed twin's pass stops at the op's inputs' nodes: the same tensor as q, k and v
  // gets the sum of its three uses once (not three times), and an input computed from
  // another input is not gone through by the twin's pass and again by the enclosing one.
  manual_seed(71);
  const Tensor x = randn({2, 5, 4}), w = randn({4});
  check_same_gradients("linear_attention(x, x, x)", [](const std::vector<Tensor>& in) {
    return linear_attention(in[0], in[0], in[0], true);
  }, {x});
  check_same_gradients("layer_norm(f(w), w, w)", [](const std::vector<Tensor>& in) {
    const Tensor rows = matmul(vec({1, -2, 0.5}, {3, 1}), in[0].reshape({1, 4})) + 0.25;  // (3, 4), from w
    return layer_norm(rows, Shape{4}, in[0], in[0]);
  }, {w});
}
