// mm.cpp - mm and bmm: the shape rules of torch.mm / torch.bmm, then matmul; and x.t().
#include "mm.h"

#include "../../core/error.h"
#include "../engine/node.h"
#include "linalg.h"
#include "shape.h"

namespace heed {

Tensor mm(const Tensor& a, const Tensor& b) {
  HEED_CHECK(a.dim() == 2 && b.dim() == 2, "mm", "expects two 2-D tensors, got shapes ",
             a.shape(), " and ", b.shape(), " (matmul broadcasts and takes vectors)");
  HEED_CHECK(a.size(1) == b.size(0), "mm", "shapes ", a.shape(), " and ", b.shape(),
             " cannot be multiplied (", a.size(1), " != ", b.size(0), ")");
  return named("mm", matmul(a, b), {a, b});
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  HEED_CHECK(a.dim() == 3 && b.dim() == 3, "bmm", "expects two 3-D tensors, got shapes ",
             a.shape(), " and ", b.shape());
  HEED_CHECK(a.size(0) == b.size(0), "bmm", "batch sizes differ: shapes ", a.shape(), " and ",
             b.shape());
  HEED_CHECK(a.size(2) == b.size(1), "bmm", "shapes ", a.shape(), " and ", b.shape(),
             " cannot be multiplied (", a.size(2), " != ", b.size(1), ")");
  return named("bmm", matmul(a, b), {a, b});
}

// y = x^T of a matrix (torch.t); a 0-D or 1-D tensor is its own transpose
Tensor Tensor::t() const {
  HEED_CHECK(dim() <= 2, "t", "expects a tensor of at most 2 dims, got shape ", shape(),
             " (use transpose(d0, d1))");
  return dim() < 2 ? *this : named("t", heed::transpose(*this, 0, 1), {*this});
}

}  // namespace heed
