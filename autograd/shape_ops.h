// shape_ops.h - ops that move elements without changing them: transpose, permute, slice,
// narrow, select, cat, stack, index_select, gather (shape_ops.cpp, indexing.cpp), and through
// views.h reshape, squeeze, unsqueeze and flatten, so that one include gives them all.
//
// The views share storage (every heed tensor is contiguous); the ops here copy. Each
// backward moves the gradient back to where the element came from.
#pragma once
#include <vector>

#include "../core/tensor.h"
#include "views.h"

namespace heed {

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
// Elements start, start+step, ... < end along dim (negative start/end count from the end,
// and are clamped to the size, as Python slicing).
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
// y = x[..., index, ...] along dim, that dim removed (torch.select; x[:, t] in Python).
// index may be negative (counts from the end). Differentiable: narrow then squeeze.
// heed::select, so that select(x, 1, t) never means POSIX select().
Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor cat(const std::vector<Tensor>& xs, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& xs, int64_t dim = 0);
// y = x selecting entries `index` (1-D) along dim: y.shape = x.shape with dim -> index.numel()
Tensor index_select(const Tensor& x, int64_t dim, const IndexTensor& index);
// y[i][j][k] = x[index[i][j][k]][j][k] (dim 0), etc.: y.shape = index.shape
Tensor gather(const Tensor& x, int64_t dim, const IndexTensor& index);

}  // namespace heed
