// reduce_util.h - internal: how a reduction over one dim sees its input.
//
// A reduction over dim d sees x as (outer, n, inner): outer = prod(dims before d),
// n = x.size(d), inner = prod(dims after d). Element (o, k, i) is at (o * n + k) * inner + i,
// and the reduced output (o, i) at o * inner + i. A scalar (rank 0) is (1, 1, 1).
// Shared by reduce.cpp, reduce_minmax.cpp, softmax.cpp and the bias gradients of Linear and
// the recurrent layers; not part of the public API.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../../core/allocator.h"
#include "../../core/parallel.h"
#include "../../core/real.h"
#include "../../core/shape.h"

namespace heed::detail {

struct Split {
  int64_t outer = 1, n = 1, inner = 1;
};

inline Split split_at(const Shape& s, int d) {
  Split sp;
  if (s.size() == 0) return sp;  // a scalar reduced over dim 0 / -1
  sp.outer = dims_product(s, 0, d);
  sp.n = s[d];
  sp.inner = dims_product(s, d + 1, s.size());
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

// out[o, i] = sum_k x[o, k, i], summed in Acc (real, or double for more care): the rows are
// added in fixed blocks of 64, each block into its own partial row (one pass down memory,
// vectorised over i), then the partials of each (o, i) in block order. The blocks depend on
// n alone, so the result does not depend on the thread count. In real, one block (n <= 64)
// goes straight into out.
template <class Acc>
void sum_row_blocks(real* out, const real* x, int64_t outer, int64_t n, int64_t inner) {
  constexpr int64_t kRows = 64, kCols = 1024;
  constexpr bool direct_ok = std::is_same_v<Acc, real>;
  const int64_t blocks = std::max<int64_t>(1, (n + kRows - 1) / kRows);
  const int64_t chunks = (inner + kCols - 1) / kCols;
  const bool direct = direct_ok && blocks == 1;
  std::vector<Acc, CachingAllocator<Acc>> part(direct ? 0 : outer * blocks * inner);
  Acc* pp = direct ? reinterpret_cast<Acc*>(out) : part.data();  // (outer, blocks, inner)
  const int64_t work = std::min(n, kRows) * std::min(inner, kCols) + 1;
  parallel_for(outer * blocks * chunks, kGrainElementwise / work + 1, [&](int64_t b, int64_t e) {
    for (int64_t w = b; w < e; ++w) {  // w = (o, block, chunk)
      const int64_t o = w / (blocks * chunks), blk = w / chunks % blocks, c = w % chunks;
      const int64_t i0 = c * kCols, i1 = std::min(inner, i0 + kCols);
      const int64_t k0 = blk * kRows, k1 = std::min(n, k0 + kRows);
      Acc* dst = pp + (o * blocks + blk) * inner;
      for (int64_t i = i0; i < i1; ++i) dst[i] = 0;
      for (int64_t k = k0; k < k1; ++k) {
        const real* src = x + (o * n + k) * inner;
        for (int64_t i = i0; i < i1; ++i) dst[i] += src[i];
      }
    }
  });
  if (direct) return;
  parallel_for(outer * chunks, kGrainElementwise / (blocks * kCols) + 1, [&](int64_t b, int64_t e) {
    for (int64_t w = b; w < e; ++w) {  // w = (o, chunk): block 0's row gathers the others
      const int64_t o = w / chunks, i0 = w % chunks * kCols, i1 = std::min(inner, i0 + kCols);
      Acc* sum = pp + o * blocks * inner;
      for (int64_t blk = 1; blk < blocks; ++blk)
        for (int64_t i = i0; i < i1; ++i) sum[i] += sum[blk * inner + i];
      for (int64_t i = i0; i < i1; ++i) out[o * inner + i] = real(sum[i]);
    }
  });
}

// col (cols) = the sum of the rows of m (rows, cols), in double: the gradient of a bias added
// to every row (Linear, the LSTM and GRU layers and cells).
inline void column_sums(real* col, const real* m, int64_t rows, int64_t cols) {
  sum_row_blocks<double>(col, m, 1, rows, cols);
}

}  // namespace heed::detail
