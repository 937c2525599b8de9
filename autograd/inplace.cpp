// inplace.cpp - x += y, x -= y, x *= y, x /= y (core/tensor.h), and the rule they share with
// index_put_ (inplace.h): in place when no graph runs through the update, else the op is
// recorded out of place and x is made to refer to its result.
#include "inplace.h"

#include "../core/error.h"
#include "arith.h"
#include "grad_mode.h"

namespace heed {

bool detail::update_in_place(const char* op, const Tensor& x, const Tensor& y) {
  HEED_CHECK(x.defined(), op, "use of an undefined tensor");
  if (!GradMode::enabled()) return true;
  HEED_CHECK(!(x.is_leaf() && x.requires_grad()), op,
             "a leaf that requires grad cannot be updated in place while grad mode is on; wrap "
             "the update in heed::NoGradGuard, or write x = x + y (shape ", x.shape(), ")");
  return !(x.requires_grad() || (y.defined() && y.requires_grad()));
}

namespace {

// x = f(x, y), written into x's storage or recorded and rebound by the rule above.
template <class F>
Tensor& compound(const char* op, Tensor& x, const Tensor& y, const F& f) {
  const bool in_place = detail::update_in_place(op, x, y);
  HEED_CHECK(y.defined(), op, "the right side is undefined");
  HEED_CHECK(is_broadcastable_to(y.shape(), x.shape()), op, "the right side's shape ", y.shape(),
             " does not broadcast to x's shape ", x.shape(), " (x is updated in place)");
  Tensor r;
  if (in_place) {
    NoGradGuard no_grad;
    r = f(x, y);
  } else {
    r = f(x, y);
  }
  if (!in_place) return x = r;
  x.copy_(r);  // bumps x's version
  return x;
}

}  // namespace

Tensor& Tensor::operator+=(const Tensor& y) { return compound("+=", *this, y, [](const Tensor& a, const Tensor& b) { return add(a, b); }); }
Tensor& Tensor::operator-=(const Tensor& y) { return compound("-=", *this, y, [](const Tensor& a, const Tensor& b) { return sub(a, b); }); }
Tensor& Tensor::operator*=(const Tensor& y) { return compound("*=", *this, y, [](const Tensor& a, const Tensor& b) { return mul(a, b); }); }
Tensor& Tensor::operator/=(const Tensor& y) { return compound("/=", *this, y, [](const Tensor& a, const Tensor& b) { return div(a, b); }); }
Tensor& Tensor::operator+=(real y) { return *this += scalar_tensor(y); }
Tensor& Tensor::operator-=(real y) { return *this -= scalar_tensor(y); }
Tensor& Tensor::operator*=(real y) { return *this *= scalar_tensor(y); }
Tensor& Tensor::operator/=(real y) { return *this /= scalar_tensor(y); }

}  // namespace heed
