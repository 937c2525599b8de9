// smooth_l1_loss.cpp - smooth L1 and Huber losses composed from heed ops (smooth_l1_loss.h).
// where() routes the gradient to the branch it took, so the quadratic branch never sees the
// kink of |d| at 0, and the two branches meet with equal slopes at |d| = beta.
#include "smooth_l1_loss.h"

#include <cmath>

#include "../../core/error.h"
#include "../engine/node.h"
#include "arith.h"
#include "compare.h"
#include "reduce.h"
#include "unary.h"

namespace heed {

namespace {

Tensor reduce(const Tensor& l, Reduction r) {
  switch (r) {
    case Reduction::Sum: return sum(l);
    case Reduction::Mean: return mean(l);
    case Reduction::None: break;
  }
  return l;
}

void check_pair(const char* op, const Tensor& x, const Tensor& y) {
  HEED_CHECK(x.defined() && y.defined(), op, "input or target is undefined");
  HEED_CHECK(x.shape() == y.shape(), op, "input ", x.shape(), " and target ", y.shape(),
             " do not match");
}

// The mean of no elements: 0, as the other losses give it (loss.h), not 0/0.
Tensor reduce_or_zero(const Tensor& l, Reduction r) {
  return r == Reduction::Mean && l.numel() == 0 ? sum(l) : reduce(l, r);
}

}  // namespace

// l = where(|d| < beta, 0.5 d^2 / beta, |d| - 0.5 beta),  d = x - y
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  const char* op = "smooth_l1_loss";
  check_pair(op, input, target);
  HEED_CHECK(beta >= 0 && std::isfinite(beta), op, "beta must be finite and >= 0, got ", beta);
  const Tensor d = input - target, a = abs(d);
  const Tensor l = beta == 0 ? a
                             : where(lt(a, real(beta)), d * d * real(0.5 / beta), a - real(0.5 * beta));
  return named(op, reduce_or_zero(l, reduction), {input, target});
}

// l = where(|d| < delta, 0.5 d^2, delta (|d| - 0.5 delta)),  d = x - y
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  const char* op = "huber_loss";
  check_pair(op, input, target);
  HEED_CHECK(delta > 0 && std::isfinite(delta), op, "delta must be finite and > 0, got ", delta);
  const Tensor d = input - target, a = abs(d);
  const Tensor l = where(lt(a, real(delta)), d * d * real(0.5), (a - real(0.5 * delta)) * real(delta));
  return named(op, reduce_or_zero(l, reduction), {input, target});
}

}  // namespace heed
