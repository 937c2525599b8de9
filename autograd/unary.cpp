// STUB: to be replaced
#include "unary.h"
#include "../core/error.h"

namespace heed {

Tensor exp(const Tensor& x) { fail("exp", "not implemented yet"); }
Tensor log(const Tensor& x) { fail("log", "not implemented yet"); }
Tensor sqrt(const Tensor& x) { fail("sqrt", "not implemented yet"); }
Tensor tanh(const Tensor& x) { fail("tanh", "not implemented yet"); }
Tensor sigmoid(const Tensor& x) { fail("sigmoid", "not implemented yet"); }
Tensor relu(const Tensor& x) { fail("relu", "not implemented yet"); }
Tensor gelu(const Tensor& x, const std::string& approximate) { fail("gelu", "not implemented yet"); }
Tensor elu(const Tensor& x, real alpha) { fail("elu", "not implemented yet"); }
Tensor abs(const Tensor& x) { fail("abs", "not implemented yet"); }
Tensor clamp(const Tensor& x, real lo, real hi) { fail("clamp", "not implemented yet"); }
Tensor clamp_min(const Tensor& x, real lo) { fail("clamp_min", "not implemented yet"); }
Tensor clamp_max(const Tensor& x, real hi) { fail("clamp_max", "not implemented yet"); }

}  // namespace heed
