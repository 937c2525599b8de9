// dropout.h - inverted dropout (Srivastava et al. 2014), as F.dropout.
//
//   training:  m_i = 1 with probability 1 - p, else 0       y = x * m / (1 - p)
//   eval:      y = x                                          (x itself is returned)
//
// Scaling at training time keeps E[y] = x, so nothing changes at eval time. The mask is
// drawn from heed's seeded generator (core/random.h): manual_seed(s) repeats it.
// Used by nn::Dropout and, later, by attention on its weights.
#pragma once
#include "../../core/tensor.h"

namespace heed {

// p must be in [0, 1); anything else throws heed::Error naming "dropout" and p.
Tensor dropout(const Tensor& x, double p, bool training);

}  // namespace heed
