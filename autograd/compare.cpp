// STUB: to be replaced
#include "compare.h"
#include "../core/error.h"

namespace heed {

Tensor eq(const Tensor& a, const Tensor& b) { fail("eq", "not implemented yet"); }
Tensor ne(const Tensor& a, const Tensor& b) { fail("ne", "not implemented yet"); }
Tensor lt(const Tensor& a, const Tensor& b) { fail("lt", "not implemented yet"); }
Tensor le(const Tensor& a, const Tensor& b) { fail("le", "not implemented yet"); }
Tensor gt(const Tensor& a, const Tensor& b) { fail("gt", "not implemented yet"); }
Tensor ge(const Tensor& a, const Tensor& b) { fail("ge", "not implemented yet"); }
Tensor eq(const Tensor& a, real b) { fail("eq", "not implemented yet"); }
Tensor ne(const Tensor& a, real b) { fail("ne", "not implemented yet"); }
Tensor lt(const Tensor& a, real b) { fail("lt", "not implemented yet"); }
Tensor le(const Tensor& a, real b) { fail("le", "not implemented yet"); }
Tensor gt(const Tensor& a, real b) { fail("gt", "not implemented yet"); }
Tensor ge(const Tensor& a, real b) { fail("ge", "not implemented yet"); }
Tensor logical_not(const Tensor& mask) { fail("logical_not", "not implemented yet"); }
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) { fail("where", "not implemented yet"); }
Tensor masked_fill(const Tensor& x, const Tensor& mask, real value) { fail("masked_fill", "not implemented yet"); }
Tensor triu(const Tensor& x, int64_t k) { fail("triu", "not implemented yet"); }
Tensor tril(const Tensor& x, int64_t k) { fail("tril", "not implemented yet"); }

}  // namespace heed
