// gradcheck_recompute.cpp - finite-difference checks (double build) through checkpoint():
// inputs, a captured parameter, a non-leaf input, nesting, and linear attention inside.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/attention/linear_attention.h>
#include <heed/autograd/engine/recompute.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

TEST_CASE("gradcheck checkpoint: inputs and a parameter captured by fn") {
  manual_seed(41);
  Tensor x = param({3, 4}), b = param({2}), w = param({4, 2});
  // w is captured, not passed: gradcheck perturbs it in place, the lambda reads it.
  auto block = [&w](const V& v) { return tanh(matmul(v[0], w) + v[1]) * v[1]; };
  check_grad([&](const V& v) { return checkpoint(block, {v[0], v[1]}); }, {x, b, w});
  // a non-leaf input: its gradient leaves the checkpoint node into the outer graph
  check_grad([&](const V& v) { return checkpoint(block, {v[0] * v[0], v[1]}) * 2; }, {x, b, w});
  // only the captured parameter requires grad
  const Tensor xc = x.detach(), bc = b.detach();
  check_grad([&](const V&) { return checkpoint(block, {xc, bc}); }, {w});
}

TEST_CASE("gradcheck checkpoint: nested checkpoints and a block of linear attention") {
  manual_seed(42);
  Tensor x = param({2, 3, 4}), w = param({4, 4});
  auto inner = [&w](const V& v) { return tanh(matmul(v[0], w)); };
  auto outer = [&](const V& v) { return checkpoint(inner, {checkpoint(inner, v)}); };
  check_grad([&](const V& v) { return checkpoint(outer, {v[0]}); }, {x, w});
  auto attention = [&w](const V& v) {
    const Tensor h = matmul(v[0], w);  // (B, T, 4)
    return linear_attention(h, h, v[0], /*causal=*/true);
  };
  check_grad([&](const V& v) { return checkpoint(attention, {v[0]}); }, {x, w});
}

TEST_CASE("gradgradcheck checkpoint: second derivatives through inputs and a captured parameter") {
  // Under create_graph the re-run's pass is recorded, so dL/dx and dL/dw (w captured, not
  // passed) are differentiable again in x, b and w.
  manual_seed(43);
  Tensor x = param({3, 4}), b = param({2}), w = param({4, 2});
  auto block = [&w](const V& v) { return tanh(matmul(v[0], w) + v[1]) * v[1]; };
  const GradcheckResult r = gradgradcheck([&](const V& v) { return checkpoint(block, {v[0], v[1]}); }, {x, b, w});
  CHECK_MESSAGE(r.ok, r.message);
  // a fused op inside, given one tensor twice (its composed twin's pass stops at its inputs)
  auto attention = [](const V& v) {
    const Tensor h = v[0] * 0.5;  // (B, T, 4)
    return linear_attention(h, h, v[0], /*causal=*/true);
  };
  Tensor y = param({1, 3, 4});
  const GradcheckResult r2 = gradgradcheck([&](const V& v) { return checkpoint(attention, {v[0]}); }, {y});
  CHECK_MESSAGE(r2.ok, r2.message);
}
