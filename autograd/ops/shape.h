// shape.h - ops that move elements without changing them: transpose, permute, slice,
// narrow, select, cat, stack (shape.cpp), and through indexing.h index_select and gather,
// through views.h reshape, squeeze, unsqueeze and flatten, so that one include gives them all.
//
// The views share storage; the ops here copy, but a block of x shares it (core/tensor.h,
// "Views"). Each backward moves the gradient back to where the element came from.
#pragma once
#include <initializer_list>
#include <vector>

#include "../../core/tensor.h"
#include "indexing.h"
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
// `chunks` pieces along dim, as torch.chunk: each ceil(n / chunks) long and the last one
// shorter, so there are fewer than `chunks` when n runs out (n = 5, chunks = 4: 2, 2, 1);
// `chunks` empty pieces when n = 0. Each piece is narrow(x, dim, start, len), named "chunk"
// (libtorch's SplitBackward0), so its backward and double backward are narrow's.
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
// Pieces of split_size along dim, the last shorter, as torch.split: ceil(n / split_size) of
// them (one, empty, when n = 0; split_size 0 only then). The second form cuts pieces of the
// given sizes, which must add up to n (torch.split_with_sizes). Each piece is a narrow, so
// along dim 0 it shares x's storage and elsewhere it is a marked copy (core/tensor.h, "Views").
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& split_sizes, int64_t dim = 0);
// x.select(dim, i) for every i, as torch.unbind: dim removed; views by select's rule.
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);
// Dim source moves to destination, the others keep their order (torch.movedim): a permute.
// The list form moves several; each list without repeats, both of one length.
Tensor movedim(const Tensor& x, int64_t source, int64_t destination);
Tensor movedim(const Tensor& x, const std::vector<int64_t>& source, const std::vector<int64_t>& destination);
// NumPy's names for transpose(x, d0, d1), as torch.swapaxes and torch.swapdims.
Tensor swapaxes(const Tensor& x, int64_t d0, int64_t d1);
Tensor swapdims(const Tensor& x, int64_t d0, int64_t d1);
Tensor cat(const std::vector<Tensor>& xs, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& xs, int64_t dim = 0);
// A braced list of Tensors, cat({a, b}, 1), lands here. These overloads also give an empty
// list, cat({}), a meaning: without them it would be ambiguous between the Tensor and the
// IndexTensor vectors (core/tensor.h). As in libtorch it compiles, and throws heed::Error
// naming cat or stack.
Tensor cat(std::initializer_list<Tensor> xs, int64_t dim = 0);
Tensor stack(std::initializer_list<Tensor> xs, int64_t dim = 0);

}  // namespace heed
