// STUB: to be replaced
#include "shape_ops.h"
#include "../core/error.h"

namespace heed {

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) { fail("transpose", "not implemented yet"); }
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) { fail("permute", "not implemented yet"); }
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) { fail("slice", "not implemented yet"); }
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) { fail("narrow", "not implemented yet"); }
Tensor cat(const std::vector<Tensor>& xs, int64_t dim) { fail("cat", "not implemented yet"); }
Tensor stack(const std::vector<Tensor>& xs, int64_t dim) { fail("stack", "not implemented yet"); }

}  // namespace heed
