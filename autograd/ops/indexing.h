// indexing.h - index_select and gather: copies chosen by integer ids (indexing.cpp);
// shape.h includes this header. Every id is checked against the size it indexes.
#pragma once
#include "../../core/tensor.h"

namespace heed {

// y = x selecting entries `index` (1-D) along dim: y.shape = x.shape with dim -> index.numel()
Tensor index_select(const Tensor& x, int64_t dim, const IndexTensor& index);
// y[i][j][k] = x[index[i][j][k]][j][k] (dim 0), etc.: y.shape = index.shape
Tensor gather(const Tensor& x, int64_t dim, const IndexTensor& index);

}  // namespace heed
