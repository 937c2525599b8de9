// test_anomaly.cpp - DetectAnomalyGuard names the op that first made a NaN or an Inf.
#include <cmath>
#include <memory>
#include <string>

#include <heed/autograd/engine/anomaly_mode.h>
#include <heed/autograd/engine/node.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/compare.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;

static bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("anomaly mode: a NaN made in forward names the op and its creation index") {
  Tensor x = from_vector({1, -1, 2}, {3}).requires_grad_();
  DetectAnomalyGuard guard;
  const std::string err = error_of([&] { log(x * 2); });
  CHECK(contains(err, "anomaly: forward op 'log' (#"));
  CHECK(contains(err, "NaN at element 1"));
  CHECK(contains(err, "shape (3)"));
}

TEST_CASE("anomaly mode: an Inf or NaN made in backward names the op that made it") {
  Tensor x = from_vector({4, 0, 1}, {3}).requires_grad_();
  {
    DetectAnomalyGuard guard;
    Tensor y = sqrt(x);  // forward is finite; d sqrt / dx = 1 / (2 sqrt(x)) is Inf at 0
    Tensor loss = sum(y * 3);
    const std::string index = "forward op #" + std::to_string(y.grad_fn()->anomaly_index) + ")";
    const std::string err = error_of([&] { loss.backward(); });
    CHECK(contains(err, "anomaly: backward of 'sqrt' (" + index));
    CHECK(contains(err, "produced Inf in the gradient of input 0 at element 1"));
  }
  {
    DetectAnomalyGuard guard;
    Tensor loss = sum(sqrt(x) * 0);  // 0 * Inf: NaN
    CHECK(contains(error_of([&] { loss.backward(); }), "backward of 'sqrt'"));
    CHECK(contains(error_of([&] { sum(sqrt(x) * 0).backward(); }), "produced NaN"));
  }
}

TEST_CASE("anomaly mode is off by default and the guard restores it") {
  CHECK_FALSE(AnomalyMode::enabled());
  Tensor x = from_vector({0}, {1}).requires_grad_();
  sum(sqrt(x)).backward();  // as PyTorch without detect_anomaly: Inf, no error
  CHECK(std::isinf(x.grad().item()));
  {
    DetectAnomalyGuard outer;
    { DetectAnomalyGuard inner; }
    CHECK(AnomalyMode::enabled());
  }
  CHECK_FALSE(AnomalyMode::enabled());
}

// Two threads' guards, or guards held in objects, need not end in reverse order. Each guard
// restoring the value it saw would leave the first one's owner unchecked after the other
// ended, and anomaly mode on for good after both.
TEST_CASE("anomaly mode: guards that overlap without nesting keep it on exactly while one lives") {
  CHECK_FALSE(AnomalyMode::enabled());
  auto a = std::make_unique<DetectAnomalyGuard>();
  auto b = std::make_unique<DetectAnomalyGuard>();
  a.reset();  // the first one ends first
  CHECK(AnomalyMode::enabled());
  b.reset();
  CHECK_FALSE(AnomalyMode::enabled());
  AnomalyMode::set_enabled(true);  // the switch holds on its own, and beside a guard
  { DetectAnomalyGuard g; }
  CHECK(AnomalyMode::enabled());
  AnomalyMode::set_enabled(false);
  CHECK_FALSE(AnomalyMode::enabled());
}

TEST_CASE("anomaly mode: -inf in a forward output is legitimate (masked scores)") {
  Tensor s = randn({2, 4}).requires_grad_();
  Tensor keep = from_vector({1, 1, 0, 0, 1, 0, 0, 0}, {2, 4});
  DetectAnomalyGuard guard;
  Tensor e = masked_fill(s, eq(keep, zeros({2, 4})), -INFINITY);
  Tensor a = softmax(e, -1);
  sum(a * randn({2, 4})).backward();  // no error: masked weights are 0 and so are their grads
  CHECK(s.grad().at({0, 2}) == 0);
}
