// inplace.h - internal: the one rule of x += y, x.add_(y) (and the other in-place methods)
// and x.index_put_(I, v) (core/tensor.h).
//   grad mode on, x a leaf that requires grad   -> heed::Error naming op (as PyTorch)
//   grad mode on, x or y requires grad          -> false: record the op out of place and
//                                                  make x refer to its result
//   otherwise                                   -> true: write x's storage and bump its version
#pragma once
#include "../../core/tensor.h"

namespace heed::detail {

bool update_in_place(const char* op, const Tensor& x, const Tensor& y);

}  // namespace heed::detail
