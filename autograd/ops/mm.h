// mm.h - mm and bmm, matmul with libtorch's strict shapes (torch.mm, torch.bmm): no
// broadcasting and no vectors, so a wrong rank is an error instead of a silent broadcast.
//   mm(a, b)    a (N, K), b (K, M)         -> (N, M)
//   bmm(a, b)   a (B, N, K), b (B, K, M)   -> (B, N, M)
// Both are matmul (linalg.h) once the shapes are checked, with its gradient; the recorded
// node is named "mm" / "bmm". x.t() (core/tensor.h), the transpose of a matrix, is here too.
#pragma once
#include "../../core/tensor.h"

namespace heed {

Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);

}  // namespace heed
