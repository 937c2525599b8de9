// relative_position_terms.cpp - Shaw et al.'s key and value terms, bucketed (what the layer uses)
// and in the paper's materialised form (the reference).
#include "relative_position_terms.h"

#include <vector>

#include "../../../core/error.h"
#include "../arith.h"
#include "../linalg.h"
#include "relative_position.h"
#include "../shape.h"

namespace heed {

// k from a (2k+1, d) table; heed::Error naming op when the table has another shape.
static int64_t table_k(const char* op, const Tensor& table, int64_t d) {
  HEED_CHECK(table.dim() == 2 && table.size(0) % 2 == 1 && table.size(1) == d, op, "table ",
             table.shape(), " must be (2k+1, d) with d = ", d);
  return (table.size(0) - 1) / 2;
}

IndexTensor relative_distance_index(int64_t Tq, int64_t Tk, int64_t k) {
  const RelativeBuckets b = relative_buckets(Tq, Tk, k);
  std::vector<int64_t> ids(Tq * Tk);
  for (int64_t i = 0; i < Tq; ++i)
    for (int64_t j = 0; j < Tk; ++j) ids[i * Tk + j] = b.distance(i, j) + k;
  return IndexTensor(ids, {Tq, Tk});
}

// ---------------------------------------------------------------- bucketed (what layers use)

// scale * q_i . w^K_{r(i,j)}:  P = q rows^T (.., Tq, R), then y[i, j] = P[i, bucket(i, j)].
// rows = the R table rows whose distances occur (a narrow: its gradient lands in place).
Tensor relative_key_bias(const Tensor& q, const Tensor& key_table, int64_t Tk, double scale) {
  HEED_CHECK(q.dim() >= 2, "relative_key_bias", "q must be (..., Tq, d); got ", q.shape());
  const int64_t k = table_k("relative_key_bias", key_table, q.size(-1));
  const RelativeBuckets b = relative_buckets(q.size(-2), Tk, k);
  const Tensor rows = narrow(key_table, 0, b.lo + k, b.count());  // (R, d)
  Tensor p = matmul(q, transpose(rows, 0, 1));                     // (.., Tq, R)
  if (scale != 1) p = p * real(scale);
  return gather_buckets(p, b);  // (.., Tq, Tk)
}

// sum_j alpha_ij w^V_{r(i,j)} = sum_r A[i, r] w^V_r,  A = scatter_buckets(alpha) (.., Tq, R).
Tensor relative_value_context(const Tensor& alpha, const Tensor& value_table) {
  HEED_CHECK(alpha.dim() >= 2, "relative_value_context", "alpha must be (..., Tq, Tk); got ",
             alpha.shape());
  const int64_t k = table_k("relative_value_context", value_table, value_table.size(-1));
  const RelativeBuckets b = relative_buckets(alpha.size(-2), alpha.size(-1), k);
  const Tensor rows = narrow(value_table, 0, b.lo + k, b.count());  // (R, d)
  return matmul(scatter_buckets(alpha, b), rows);                    // (.., Tq, d)
}

// ---------------------------------------------------------------- the paper's form

// a_ij = table[clip(j - i, k) + k], all of them: (Tq, Tk, d).
static Tensor materialise(const Tensor& table, int64_t Tq, int64_t Tk, int64_t k) {
  const IndexTensor ids = relative_distance_index(Tq, Tk, k).reshape({Tq * Tk});
  return reshape(index_select(table, 0, ids), {Tq, Tk, table.size(1)});
}

// e_ij = scale * q_i . a^K_ij, as one batched matmul over i: (.., Tq, 1, d) @ (Tq, d, Tk).
Tensor relative_key_bias_reference(const Tensor& q, const Tensor& key_table, int64_t Tk,
                                   double scale) {
  HEED_CHECK(q.dim() >= 2, "relative_key_bias_reference", "q must be (..., Tq, d); got ", q.shape());
  const int64_t k = table_k("relative_key_bias_reference", key_table, q.size(-1));
  const Tensor aK = materialise(key_table, q.size(-2), Tk, k);           // (Tq, Tk, d)
  const Tensor e = matmul(unsqueeze(q, -2), transpose(aK, 1, 2));       // (.., Tq, 1, Tk)
  return squeeze(e, -2) * real(scale);
}

// c_i = sum_j alpha_ij a^V_ij, as one batched matmul over i: (.., Tq, 1, Tk) @ (Tq, Tk, d).
Tensor relative_value_context_reference(const Tensor& alpha, const Tensor& value_table) {
  HEED_CHECK(alpha.dim() >= 2, "relative_value_context_reference", "alpha must be (..., Tq, Tk); "
             "got ", alpha.shape());
  const int64_t k = table_k("relative_value_context_reference", value_table, value_table.size(-1));
  const Tensor aV = materialise(value_table, alpha.size(-2), alpha.size(-1), k);  // (Tq, Tk, d)
  return squeeze(matmul(unsqueeze(alpha, -2), aV), -2);                         // (.., Tq, d)
}

}  // namespace heed
