// relative_position.cpp - the tables (RelativePositionEmbedding) and RelativeSelfAttention;
// the key and value terms are autograd/ops/attention/relative_position_terms.cpp.
#include "relative_position.h"

#include <cmath>

#include "../../autograd/ops/arith.h"
#include "../../autograd/ops/linalg.h"
#include "../../autograd/ops/reduce.h"
#include "../../autograd/ops/attention/relative_position.h"
#include "../../autograd/ops/shape.h"
#include "../../core/error.h"
#include "../init.h"
#include "../repr.h"

namespace heed::nn {

// ---------------------------------------------------------------- the tables

RelativePositionEmbeddingImpl::RelativePositionEmbeddingImpl(int64_t k, int64_t d)
    : max_relative_position(k), head_dim(d) {
  HEED_CHECK(k >= 0 && d >= 1, "RelativePositionEmbedding", "need max_relative_position >= 0 "
             "and head_dim >= 1; got ", k, " and ", d);
  key_table = register_parameter("key_table", empty({2 * k + 1, d}));
  value_table = register_parameter("value_table", empty({2 * k + 1, d}));
  reset_parameters();
}

void RelativePositionEmbeddingImpl::reset_parameters() {
  init::xavier_uniform_(key_table);
  init::xavier_uniform_(value_table);
}

std::string RelativePositionEmbeddingImpl::repr() const {
  return "RelativePositionEmbedding(max_relative_position=" +
         std::to_string(max_relative_position) + ", head_dim=" + std::to_string(head_dim) + ")";
}

// ---------------------------------------------------------------- the attention layer

RelativeSelfAttentionImpl::RelativeSelfAttentionImpl(const RelativeSelfAttentionOptions& opts)
    : options(opts) {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  HEED_CHECK(E >= 1 && H >= 1 && E % H == 0, "RelativeSelfAttention", "embed_dim ", E,
             " must be a positive multiple of num_heads ", H);
  HEED_CHECK(options.dropout() >= 0 && options.dropout() < 1, "RelativeSelfAttention",
             "dropout must be in [0, 1); got ", options.dropout());
  const LinearOptions proj = LinearOptions(E, E).bias(options.bias());
  q_proj = register_module("q_proj", Linear(proj));
  k_proj = register_module("k_proj", Linear(proj));
  v_proj = register_module("v_proj", Linear(proj));
  out_proj = register_module("out_proj", Linear(proj));
  relative = register_module("relative", RelativePositionEmbedding(
                                             options.max_relative_position(), E / H));
}

AttentionOutput RelativeSelfAttentionImpl::forward(const Tensor& x, const AttentionMask& mask,
                                               bool average_attn_weights) {
  const char* op = "RelativeSelfAttention";
  const int64_t E = options.embed_dim(), H = options.num_heads(), d = E / H;
  HEED_CHECK(x.dim() == 3 && x.size(2) == E, op, "x must be (B, T, ", E, "); got ", x.shape());
  const int64_t B = x.size(0), T = x.size(1);
  auto split_heads = [&](const Tensor& t) {  // (B, T, E) -> (B, H, T, d)
    return transpose(reshape(t, {B, T, H, d}), 1, 2);
  };
  // 1. projections, one per role, split into heads
  const Tensor q = split_heads(q_proj->forward(x));  // (B, H, T, d)
  const Tensor k = split_heads(k_proj->forward(x));  // (B, H, T, d)
  const Tensor v = split_heads(v_proj->forward(x));  // (B, H, T, d)
  // 2. e_ij = (q_i . k_j + q_i . a^K_ij) / sqrt(d)
  const double scale = 1 / std::sqrt(double(d));
  const Tensor e = matmul(q, transpose(k, 2, 3)) * real(scale) + relative->key_bias(q, T, scale);
  // 3. alpha = dropout(softmax(mask(e))), c = alpha v: the shared core
  const Attended a = attend(op, e, v, mask, options.dropout(), is_training());
  // 4. c_i += sum_j alpha_ij a^V_ij
  const Tensor c = a.context + relative->value_context(a.weights);  // (B, H, T, d)
  // 5. concatenate the heads and project
  const Tensor y = out_proj->forward(reshape(transpose(c, 1, 2), {B, T, E}));  // (B, T, E)
  return {y, average_attn_weights ? mean(a.weights, 1) : a.weights};
}

std::string RelativeSelfAttentionImpl::repr() const {
  return "RelativeSelfAttention(embed_dim=" + std::to_string(options.embed_dim()) +
         ", num_heads=" + std::to_string(options.num_heads()) + ", max_relative_position=" +
         std::to_string(options.max_relative_position()) + ", dropout=" +
         detail::py_float(options.dropout()) + ", bias=" + detail::py_bool(options.bias()) + ")";
}

}  // namespace heed::nn
