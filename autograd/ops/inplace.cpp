// inplace.cpp - x += y, x -= y, x *= y, x /= y and the named in-place methods (add_, sub_,
// mul_, div_, exp_, clamp_; core/tensor.h), by the rule they share with index_put_
// (inplace.h): in place when no graph runs through the update, else the op is recorded out
// of place and x is made to refer to its result.
#include "inplace.h"

#include <limits>

#include "../../core/error.h"
#include "../../core/parallel.h"
#include "../engine/grad_mode.h"
#include "arith.h"
#include "unary.h"

namespace heed {

bool detail::update_in_place(const char* op, const Tensor& x, const Tensor& y) {
  HEED_CHECK(x.defined(), op, "use of an undefined tensor");
  check_writable(op, x);
  if (!GradMode::enabled()) return true;
  HEED_CHECK(!(x.is_leaf() && x.requires_grad()), op,
             "a leaf that requires grad cannot be updated in place while grad mode is on; wrap "
             "the update in heed::NoGradGuard, or write x = x + y (shape ", x.shape(), ")");
  return !(x.requires_grad() || (y.defined() && y.requires_grad()));
}

namespace {

// x = f(x, y) (y undefined: x = f(x)), written into x's storage or recorded and rebound by
// the rule above. Written in place, a y of x's shape or of one element runs kernel(x_i, y_i)
// in one loop over x (the optimizers' and the engine's updates: no temporary); any other
// broadcast, and a unary f, computes f's result and copies it in.
template <class F, class K>
Tensor& compound(const char* op, Tensor& x, const Tensor& y, const F& f, const K& kernel) {
  const bool in_place = detail::update_in_place(op, x, y);
  detail::check_no_overlap(op, x, y);
  if (y.defined())
    HEED_CHECK(is_broadcastable_to(y.shape(), x.shape()), op, "the right side's shape ", y.shape(),
               " does not broadcast to x's shape ", x.shape(), " (x is updated in place)");
  if (!in_place) return x = f(x, y);
  if (y.defined() && (y.shape() == x.shape() || y.numel() == 1)) {
    x.bump_version();
    real* p = x.data();
    const real* q = y.data();
    if (y.shape() == x.shape()) {  // two loops, so that each vectorises
      parallel_for(x.numel(), kGrainElementwise, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) p[i] = kernel(p[i], q[i]);
      });
    } else {
      const real s = q[0];
      parallel_for(x.numel(), kGrainElementwise, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) p[i] = kernel(p[i], s);
      });
    }
    return x;
  }
  NoGradGuard no_grad;
  x.copy_(f(x, y));  // bumps x's version
  return x;
}

// x = f(x) for a number s (x.mul_(s), ...): in place through kernel(x_i) when no graph runs
// (a backward's scaled gradient, an optimizer's step: no tensor made for s), else recorded.
template <class F, class K>
Tensor& update_by_number(const char* op, Tensor& x, const F& f, const K& kernel) {
  if (!detail::update_in_place(op, x, Tensor())) return x = f(x);
  x.bump_version();
  real* p = x.data();
  parallel_for(x.numel(), kGrainElementwise, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) p[i] = kernel(p[i]);
  });
  return x;
}

const auto kAdd = [](real a, real b) { return a + b; };
const auto kSub = [](real a, real b) { return a - b; };
const auto kMul = [](real a, real b) { return a * b; };
const auto kDiv = [](real a, real b) { return a / b; };
const auto kNoKernel = [](real a, real) { return a; };  // unary ops: f runs

Tensor& compound_add(const char* op, Tensor& x, const Tensor& y, real alpha) {
  if (alpha == 1) return compound(op, x, y, [](const Tensor& a, const Tensor& b) { return add(a, b); }, kAdd);
  return compound(op, x, y, [alpha](const Tensor& a, const Tensor& b) { return add(a, mul(b, alpha)); },
                  [alpha](real a, real b) { return a + alpha * b; });
}

}  // namespace

Tensor& Tensor::operator+=(const Tensor& y) { return compound_add("+=", *this, y, 1); }
Tensor& Tensor::operator-=(const Tensor& y) { return compound("-=", *this, y, [](const Tensor& a, const Tensor& b) { return heed::sub(a, b); }, kSub); }
Tensor& Tensor::operator*=(const Tensor& y) { return compound("*=", *this, y, [](const Tensor& a, const Tensor& b) { return heed::mul(a, b); }, kMul); }
Tensor& Tensor::operator/=(const Tensor& y) { return compound("/=", *this, y, [](const Tensor& a, const Tensor& b) { return heed::div(a, b); }, kDiv); }
Tensor& Tensor::operator+=(real y) { return *this += scalar_tensor(y); }
Tensor& Tensor::operator-=(real y) { return *this -= scalar_tensor(y); }
Tensor& Tensor::operator*=(real y) { return *this *= scalar_tensor(y); }
Tensor& Tensor::operator/=(real y) { return *this /= scalar_tensor(y); }

// The named forms: the same updates under libtorch's method names (x.add_(y, alpha) is
// x += alpha * y), each error naming the method.
Tensor& Tensor::add_(const Tensor& y, real alpha) { return compound_add("add_", *this, y, alpha); }
Tensor& Tensor::add_(real s) {
  return update_by_number("add_", *this, [s](const Tensor& a) { return heed::add(a, s); }, [s](real a) { return a + s; });
}
Tensor& Tensor::sub_(const Tensor& y, real alpha) {
  if (alpha != 1) return compound_add("sub_", *this, y, -alpha);
  return compound("sub_", *this, y, [](const Tensor& a, const Tensor& b) { return heed::sub(a, b); }, kSub);
}
Tensor& Tensor::sub_(real s) {
  return update_by_number("sub_", *this, [s](const Tensor& a) { return heed::add(a, -s); }, [s](real a) { return a - s; });
}
Tensor& Tensor::mul_(const Tensor& y) { return compound("mul_", *this, y, [](const Tensor& a, const Tensor& b) { return heed::mul(a, b); }, kMul); }
Tensor& Tensor::mul_(real s) {
  return update_by_number("mul_", *this, [s](const Tensor& a) { return heed::mul(a, s); }, [s](real a) { return a * s; });
}
Tensor& Tensor::div_(const Tensor& y) { return compound("div_", *this, y, [](const Tensor& a, const Tensor& b) { return heed::div(a, b); }, kDiv); }
Tensor& Tensor::div_(real s) {
  return update_by_number("div_", *this, [s](const Tensor& a) { return heed::div(a, s); }, [s](real a) { return a / s; });
}
Tensor& Tensor::exp_() {
  return compound("exp_", *this, Tensor(), [](const Tensor& a, const Tensor&) { return heed::exp(a); }, kNoKernel);
}
Tensor& Tensor::clamp_(real lo, real hi) {
  return compound("clamp_", *this, Tensor(), [lo, hi](const Tensor& a, const Tensor&) { return heed::clamp(a, lo, hi); },
                  kNoKernel);
}

}  // namespace heed
