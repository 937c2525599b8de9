// arith.h - arithmetic with broadcasting: + - * / neg pow, and the operators. (pow with a
// tensor exponent is pow.h.)
//
// Each binary op broadcasts as NumPy/PyTorch do (core/shape.h); its backward sums the
// gradient back over broadcast dims (sum_to, autograd/ops/broadcast.h). Scalars broadcast too:
// `x * 2` and `2 * x` work. See arith.cpp for each op's derivative.
#pragma once
#include "../../core/tensor.h"

namespace heed {

Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& x);
Tensor pow(const Tensor& x, real exponent);
Tensor clone(const Tensor& x);                        // a copy that stays in the graph

// With a plain number s (what the operators below call; s - a is rsub).
Tensor add(const Tensor& a, real s);
Tensor rsub(real s, const Tensor& a);
Tensor mul(const Tensor& a, real s);
Tensor div(const Tensor& a, real s);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& x);
Tensor operator+(const Tensor& a, real b);
Tensor operator-(const Tensor& a, real b);
Tensor operator*(const Tensor& a, real b);
Tensor operator/(const Tensor& a, real b);
Tensor operator+(real a, const Tensor& b);
Tensor operator-(real a, const Tensor& b);
Tensor operator*(real a, const Tensor& b);
Tensor operator/(real a, const Tensor& b);

}  // namespace heed
