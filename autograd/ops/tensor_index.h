// tensor_index.h - reading and writing a strided region of a tensor with an index list of
// integers, Slices, None and Ellipsis (core/slice.h), as libtorch's x.index({...}) and
// x.index_put_({...}, v), Python's x[:, 0::2] and x[:, 0::2] = v.
//
//   y = index(x, I)          the region of x that I picks; integer entries remove their dim,
//                            None adds one of size 1       dx = dy put back in the region, 0 elsewhere
//   y = index_put(x, I, v)   x with that region replaced by v (v broadcasts to index(x, I)'s shape)
//                            dx = dy with the region zeroed     dv = sum_to(dy[I], v.shape)
// As in PyTorch, v may have more dims than the region when the extra leading ones are 1:
// they are dropped before broadcasting, so a (1, 1, T, E/2) value fills a (T, E/2) region.
// Each backward is the other op, so both are differentiable twice over. The methods
// x.index(I) and x.index_put_(I, v) (in place, core/tensor.h's rule) call these.
// heed::Error naming index or index_put for an integer out of range ("index 5 is out of
// range for dim 1 of size 4 of shape (3,4)"), a step <= 0, more indices than dims, two
// Ellipses, or a v that does not broadcast to the region.
//
//   using namespace heed::indexing;
//   Tensor pe = zeros({T, E});                                         // (T, E)
//   pe.index_put_({Slice(), Slice(0, None, 2)}, sin(pos * div));        // (T, E/2) into even columns
//   Tensor last = h.index({Slice(), -1});                              // (B, T, C) -> (B, C)
#pragma once
#include <vector>

#include "../../core/slice.h"
#include "../../core/tensor.h"

namespace heed {

Tensor index(const Tensor& x, const std::vector<indexing::TensorIndex>& indices);
Tensor index_put(const Tensor& x, const std::vector<indexing::TensorIndex>& indices,
                 const Tensor& v);

}  // namespace heed
