// relative_position_terms.h - the two terms of Shaw et al. 2018 ("Self-Attention with Relative
// Position Representations") as functions of the queries, the weights and the tables; the
// tables and the layer are layers/attention/relative_position.h, which explains the bucketing.
//
//   key term     e_ij  += scale * q_i . w^K_{r(i,j)}        q (.., Tq, d) -> (.., Tq, Tk)
//   value term   c_i   += sum_j alpha_ij w^V_{r(i,j)}      alpha (.., Tq, Tk) -> (.., Tq, d)
//   r(i, j) = clip(j - query_position(i, Tq, Tk), -k, k)  tables (2k+1, d), row r + k = distance r
//
// Example:
//   Tensor e = matmul(q, k.transpose(-2, -1)) * s + relative_key_bias(q, wK, Tk, s);
//   Tensor c = matmul(alpha, v) + relative_value_context(alpha, wV);
#pragma once
#include <cstdint>

#include "attention_mask.h"

namespace heed {

// (Tq, Tk) ids clip(j - query_position(i, Tq, Tk), k) + k: the table row of each query/key pair.
IndexTensor relative_distance_index(int64_t Tq, int64_t Tk, int64_t k);

// q (.., Tq, d), key_table (2k+1, d) -> scale * q_i . a^K_ij, (.., Tq, Tk).
Tensor relative_key_bias(const Tensor& q, const Tensor& key_table, int64_t Tk, double scale);
// alpha (.., Tq, Tk), value_table (2k+1, d) -> sum_j alpha_ij a^V_ij, (.., Tq, d).
Tensor relative_value_context(const Tensor& alpha, const Tensor& value_table);
// The same two, with a^K / a^V materialised as (Tq, Tk, d) tensors (the paper's form).
Tensor relative_key_bias_reference(const Tensor& q, const Tensor& key_table, int64_t Tk, double scale);
Tensor relative_value_context_reference(const Tensor& alpha, const Tensor& value_table);

}  // namespace heed
