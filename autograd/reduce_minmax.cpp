// STUB: to be replaced
#include "reduce.h"
#include "../core/error.h"

namespace heed {

Tensor max(const Tensor& x) { fail("max", "not implemented yet"); }
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim) { fail("max", "not implemented yet"); }
Tensor min(const Tensor& x) { fail("min", "not implemented yet"); }
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim) { fail("min", "not implemented yet"); }
IndexTensor argmax(const Tensor& x, int64_t dim, bool keepdim) { fail("argmax", "not implemented yet"); }
IndexTensor argmin(const Tensor& x, int64_t dim, bool keepdim) { fail("argmin", "not implemented yet"); }
Tensor var(const Tensor& x, bool unbiased) { fail("var", "not implemented yet"); }
Tensor var(const Tensor& x, int64_t dim, bool unbiased, bool keepdim) { fail("var", "not implemented yet"); }

}  // namespace heed
