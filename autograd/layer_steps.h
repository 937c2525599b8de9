// layer_steps.h - internal: what the fused recurrent layers (lstm_layer_op.cpp,
// gru_layer_op.cpp) share: the time bookkeeping and a bias's gradient. Row b of a padded
// batch has len[b] valid steps (len null: every row is T long); the reverse direction walks
// t = T-1 .. 0.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "../core/blas.h"

namespace heed::detail {

// The step of the k-th iteration: t = k forward, T-1-k reversed.
inline int64_t step_at(int64_t k, int64_t T, bool reverse) { return reverse ? T - 1 - k : k; }

// Whether row b has a valid step t; every row does when len is null.
inline bool step_valid(const int64_t* len, int64_t b, int64_t t) { return !len || t < len[b]; }

// The longest row: steps t >= it are padding in every row.
inline int64_t longest(const int64_t* len, int64_t B, int64_t T) {
  return len ? *std::max_element(len, len + B) : T;
}

// col (cols) = the sum of the rows of m (rows, cols): the gradient of a bias added to every
// row. Written (=), as one GEMM, ones (1, rows) @ m, so that it runs threaded.
inline void column_sums(real* col, const real* m, int64_t rows, int64_t cols) {
  const std::vector<real> ones(rows, real(1));
  gemm(false, false, 1, cols, rows, 1, ones.data(), rows, m, cols, 0, col, cols);
}

}  // namespace heed::detail
