// norm.h - p-norms over all elements or over dims (torch.norm, torch.linalg.vector_norm),
// and all/any, the boolean reductions (torch.all, torch.any).
//
//   ||x||_p   = (sum_k |x_k|^p)^(1/p)     p > 0 (2 by default; 1 the sum of magnitudes)
//   ||x||_inf = max_k |x_k|    ||x||_-inf = min_k |x_k|    ||x||_0 = #{k : x_k != 0}
// over every element (shape ()), or over `dims` for each index of the other dims (keepdim
// leaves the reduced dims in place with size 1). An empty dims list means every dim.
//   Tensor n = heed::norm(x, 2, -1, /*keepdim=*/true);   // (B, T, C) -> (B, T, 1)
//   Tensor g = x.norm();                                 // ||x||_2 over everything, shape ()
// Gradients are PyTorch's: at a zero norm the gradient is 0 (not NaN); for p = +-inf it is
// shared equally by the entries that attain the extreme; p = 0 has zero gradient.
// heed::Error naming norm for a negative finite or NaN p, a dim out of range or repeated, and
// an inf norm over an empty dim.
//
// all / any: 1 where every / some element over dim is non-zero (NaN counts as non-zero), else
// 0; a 0/1 tensor (heed's masks), never requiring grad. Over nothing, all is 1 and any 0.
//   bool done = heed::all(finished).item<bool>();      // finished: (B) 0/1 flags
//   bool hit = pred.eq(target).any().item<bool>();
#pragma once
#include <cstdint>
#include <vector>

#include "../../core/tensor.h"

namespace heed {

Tensor norm(const Tensor& x, double p = 2);                                   // shape ()
Tensor norm(const Tensor& x, double p, int64_t dim, bool keepdim = false);
Tensor norm(const Tensor& x, double p, const std::vector<int64_t>& dims, bool keepdim = false);

Tensor all(const Tensor& x);                                     // shape ()
Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);

}  // namespace heed
