// test_engine_passes.cpp - each backward() call keeps its counts and sums in a state of its
// own (autograd/engine/engine.cpp, GraphTask), so a pass nested inside a node's backward runs
// through nodes the outer pass shares without disturbing it.
#include <heed/autograd/engine/node.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/reduce.h>

#include "helpers.h"

using namespace heed;

namespace {

// y = x (a view of h), whose backward first runs `inner`'s backward and records what
// x.grad() is then: what gradient checkpointing does, over a graph of its own.
Tensor probe(const Tensor& h, const Tensor& inner, const Tensor& x, std::vector<real>& seen) {
  return record("probe", h.detach(), {h}, [&seen, inner, x](const Tensor& dy, Grads& g) {
    inner.backward(Tensor(), true);
    seen = x.grad().defined() ? x.grad().to_vector() : std::vector<real>{};
    g[0] = dy;
  });
}

}  // namespace

TEST_CASE("engine: a nested backward through nodes the outer pass shares runs them itself") {
  Tensor x = from_vector({1, 2, 3}, {3}).requires_grad_();
  const Tensor h = x * 3;           // the shared node: consumed by the outer graph twice
  const Tensor inner = sum(h * 2);  // and by the inner one: d inner/dx = 6
  std::vector<real> seen;
  // outer: L = sum(probe(h) + h), dL/dh = 2, dL/dx = 6. h's node waits for both consumers,
  // so it has not run when probe's backward starts the inner pass.
  sum(probe(h, inner, x, seen) + h).backward(Tensor(), true);
  // The inner pass ran h's node and x's accumulator itself, before returning: with the
  // counts kept in the nodes, it would have left its gradient in h's node for the outer
  // pass to carry, and x.grad() would still be empty here.
  CHECK(seen == std::vector<real>{6, 6, 6});
  CHECK(x.grad().to_vector() == std::vector<real>{12, 12, 12});  // the outer pass ran h once
  // h's node is reusable: neither pass left a count or a sum in it.
  x.set_grad(Tensor());
  sum(h * 5).backward();
  CHECK(x.grad().to_vector() == std::vector<real>{15, 15, 15});
}

TEST_CASE("engine: a pass that throws leaves the graph as it was") {
  Tensor x = from_vector({1, 2}, {2}).requires_grad_();
  const Tensor h = x * 2;
  bool fail = true;
  const Tensor y = record("maybe_throw", h.detach(), {h}, [&fail](const Tensor& dy, Grads& g) {
    HEED_CHECK(!fail, "maybe_throw", "asked to fail");
    g[0] = dy;
  });
  const Tensor loss = sum(y + h);
  CHECK_THROWS_AS(loss.backward(Tensor(), true), Error);
  CHECK_FALSE(x.grad().defined());  // h's node waits for both consumers: it never ran
  fail = false;
  loss.backward(Tensor(), true);  // counts start afresh: h's node runs once, with both
  CHECK(x.grad().to_vector() == std::vector<real>{4, 4});
}
