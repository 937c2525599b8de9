// reduce_util.h - internal: how a reduction over one dim sees its input.
//
// A reduction over dim d sees x as (outer, n, inner): outer = prod(dims before d),
// n = x.size(d), inner = prod(dims after d). Element (o, k, i) is at (o * n + k) * inner + i,
// and the reduced output (o, i) at o * inner + i. A scalar (rank 0) is (1, 1, 1).
// Shared by reduce.cpp, reduce_minmax.cpp and softmax.cpp; not part of the public API.
#pragma once
#include <cstdint>

#include "../core/shape.h"

namespace heed::detail {

struct Split {
  int64_t outer = 1, n = 1, inner = 1;
};

inline Split split_at(const Shape& s, int d) {
  Split sp;
  if (s.size() == 0) return sp;  // a scalar reduced over dim 0 / -1
  for (int i = 0; i < d; ++i) sp.outer *= s[i];
  sp.n = s[d];
  for (int i = d + 1; i < s.size(); ++i) sp.inner *= s[i];
  return sp;
}

// The shape after reducing dim d: d removed, or kept with size 1 (keepdim).
inline Shape reduced_shape(const Shape& s, int d, bool keepdim) {
  Shape out = s;
  if (s.size() == 0) return out;  // a scalar stays a scalar
  if (keepdim) out[d] = 1;
  else out.erase(d);
  return out;
}

}  // namespace heed::detail
