// embedding.h - table lookup: the rows of a weight matrix picked by integer ids.
//
//   y[n, :] = W[ids[n], :]        ids: (...)   W: (V, C)   y: (..., C)
//
// A dedicated op rather than index_select(W, 0, ids) so that its backward can skip the
// padding row: with padding_idx = p, W[p] never receives gradient (as F.embedding).
#pragma once
#include <optional>

#include "../../core/tensor.h"

namespace heed {

// Throws heed::Error naming `op` (e.g. "Embedding"), the id and the range [0, V) when an
// id is out of range. padding_idx, if given, must already be in [0, V).
Tensor embedding(const IndexTensor& ids, const Tensor& weight,
                 std::optional<int64_t> padding_idx = std::nullopt, const char* op = "embedding");

}  // namespace heed
