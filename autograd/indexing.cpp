// STUB: to be replaced
#include "shape_ops.h"
#include "../core/error.h"

namespace heed {

Tensor index_select(const Tensor& x, int64_t dim, const IndexTensor& index) { fail("index_select", "not implemented yet"); }
Tensor gather(const Tensor& x, int64_t dim, const IndexTensor& index) { fail("gather", "not implemented yet"); }

}  // namespace heed
