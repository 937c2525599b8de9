// trig.h - sin and cos, elementwise (torch.sin, torch.cos), as free functions and as the
// methods x.sin(), x.cos(). Sinusoidal position tables and rotary embeddings are built
// from them:
//   Tensor pe = zeros({T, E});                                     // (T, E)
//   pe.index_put_({Slice(), Slice(0, None, 2)}, sin(pos * freq));   // even columns
#pragma once
#include "../../core/tensor.h"

namespace heed {

Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);

}  // namespace heed
