// topk.h - the k largest (or smallest) entries along a dim and where they are, as
// torch.topk: beam search keeps the k best hypotheses, top-k sampling draws among them.
//
//   indices = the positions along dim of the k largest values (smallest if !largest)
//   values  = gather(x, dim, indices)           dx = dvalues put back at those positions
//
// x (.., n, ..) -> values (.., k, ..) and indices (.., k, ..): dim keeps its place, size k.
// Order: best first (descending when largest); ties keep the lower index first; NaN ranks
// above every number, as in torch. torch leaves the order unspecified when sorted = false;
// heed returns it sorted all the same. heed::Error naming topk if k is not in [0, n].
//
// Example:
//   auto [logp, ids] = heed::topk(log_softmax(logits, -1), beam);   // (B, V) -> (B, beam) each
#pragma once
#include "../../core/tensor.h"
#include "reduce.h"  // ValuesIndices

namespace heed {

ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true,
                   bool sorted = true);

}  // namespace heed
