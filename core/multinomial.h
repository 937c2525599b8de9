// multinomial.h - heed::multinomial, as torch.multinomial: num_samples category ids drawn
// from each row of a (non-negative, not necessarily normalised) probability tensor.
//
//   probs (C) -> ids (num_samples)        probs (N, C) -> ids (N, num_samples)
//
// With replacement, each draw is independent: u ~ U[0, sum p), the id is the first c with
// p_0 + ... + p_c > u, so a category of probability 0 is never drawn. Without replacement
// (the default, as PyTorch) the ids of a row are distinct: each category gets the key
// p_c / E_c with E_c ~ Exp(1), and the num_samples largest keys win, in decreasing order
// (Efraimidis & Spirakis 2006, "Weighted random sampling with a reservoir"; PyTorch's CPU
// kernel does the same). Once the categories of non-zero probability run out, the rest are
// zero-probability ones, as PyTorch. Draws come from heed's seeded generator (core/random.h).
// heed::Error with PyTorch's message for: a tensor not 1-D or 2-D, no categories,
// num_samples <= 0, num_samples > C without replacement, an element that is negative, NaN
// or infinite, a row whose sum is 0. Never differentiable: the ids are an IndexTensor.
//   IndexTensor next = heed::multinomial(softmax(logits / temperature, -1), 1);   // (B, 1)
#pragma once
#include <cstdint>

#include "tensor.h"

namespace heed {

IndexTensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false);

}  // namespace heed
