// normalize.h - Lp normalisation along one dim, as torch.nn.functional.normalize:
//
//   y = x / max(||x||_p, eps)      ||x||_p = (sum_k |x_k|^p)^(1/p) over dim, for each other index
//
// Defaults are PyTorch's (p = 2, dim = 1, eps = 1e-12). A row whose norm is below eps is
// divided by eps (an all-zero row stays zero, with gradient dy / eps, never NaN).
//   Tensor e = normalize(embeddings, 2, -1);   // unit rows, e.g. for cosine similarity
// p must be finite and >= 1 (heed::Error otherwise; PyTorch also takes 0 < p < 1 and inf).
#pragma once
#include <cstdint>

#include "../../core/tensor.h"

namespace heed {

Tensor normalize(const Tensor& x, double p = 2, int64_t dim = 1, double eps = 1e-12);

// The same op composed from primitive ops (norm, clamp_min, division): the test that proves
// the two agree, and normalize's create_graph backward (both give dy / eps at a zero row).
Tensor normalize_reference(const Tensor& x, double p = 2, int64_t dim = 1, double eps = 1e-12);

namespace nn::functional {
using heed::normalize;  // F::normalize(x, p, dim, eps), as torch's F.normalize
}  // namespace nn::functional

}  // namespace heed
