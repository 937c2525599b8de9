// pow.h - pow(x, p) with a tensor exponent, elementwise and broadcasting, as torch.pow(x, p)
// for two tensors. (pow(x, number) is in arith.h with the other arithmetic.) Its own file
// because its backward reads masked_fill (compare.h) and log (unary.h), which are built on
// arith.h: kept here, the arithmetic does not depend on them.
//   Tensor y = pow(x, p);   // x (B, C), p (C) -> (B, C)
#pragma once
#include "../../core/tensor.h"

namespace heed {

Tensor pow(const Tensor& x, const Tensor& exponent);

}  // namespace heed
