// trig.cpp - sin and cos. Each backward is written with the other op, so it is itself
// made of differentiable ops.
#include "trig.h"

#include <cmath>

#include "../../core/elementwise.h"
#include "../engine/node.h"
#include "arith.h"

namespace heed {

// y = sin(x)         dx = dy * cos(x)
Tensor sin(const Tensor& x) {
  Tensor y = map(x, [](real v) { return std::sin(v); }, kGrainTranscendental);
  return record("sin", y, {x}, kDoubleBackward, [x = SavedTensor(x)](const Tensor& dy, Grads& g) {
    g[0] = dy * cos(x);
  });
}

// y = cos(x)         dx = -dy * sin(x)
Tensor cos(const Tensor& x) {
  Tensor y = map(x, [](real v) { return std::cos(v); }, kGrainTranscendental);
  return record("cos", y, {x}, kDoubleBackward, [x = SavedTensor(x)](const Tensor& dy, Grads& g) {
    g[0] = -(dy * sin(x));
  });
}

}  // namespace heed
