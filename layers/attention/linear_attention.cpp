// linear_attention.cpp - nn::LinearAttention: project, split heads, linear_attention, merge, project.
#include "linear_attention.h"

#include "../../autograd/ops/attention/linear_attention.h"
#include "../../core/error.h"
#include "../repr.h"

namespace heed::nn {

namespace {
constexpr const char* kOp = "LinearAttention";
}

LinearAttentionImpl::LinearAttentionImpl(const LinearAttentionOptions& opts) : options(opts) {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  HEED_CHECK(E > 0 && H > 0 && E % H == 0, kOp, "embed_dim (", E,
             ") must be a positive multiple of num_heads (", H, ")");
  const LinearOptions lo = LinearOptions(E, E).bias(options.bias());
  q_proj = register_module("q_proj", Linear(lo));
  k_proj = register_module("k_proj", Linear(lo));
  v_proj = register_module("v_proj", Linear(lo));
  out_proj = register_module("out_proj", Linear(lo));
}

// 1. Q, K, V = projections                       (B, T, E)
// 2. split heads: (B, T, E) -> (B, H, T, E/H)
// 3. o = linear_attention(Q, K, V)               (B, H, Tq, E/H)
// 4. merge heads and project: (B, Tq, E) @ W_o^T + b_o
Tensor LinearAttentionImpl::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                const AttentionMask& mask) {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  HEED_CHECK(query.dim() == 3 && key.dim() == 3 && value.dim() == 3 && key.size(0) == query.size(0) &&
                 value.size(0) == query.size(0) && key.size(1) == value.size(1),
             kOp, "query, key, value must be (B, Tq, E), (B, Tk, E), (B, Tk, E); got ",
             query.shape(), ", ", key.shape(), ", ", value.shape());
  HEED_CHECK(!mask.mask().defined(), kOp, "a general attention mask cannot be applied: linear "
             "attention never forms the (Tq, Tk) weights; use key_padding and/or causal");
  const int64_t B = query.size(0), Tq = query.size(1), Tk = key.size(1);
  auto heads = [&](const Tensor& x, int64_t T) {  // 2.
    return x.reshape({B, T, H, E / H}).transpose(1, 2);
  };
  const Tensor q = heads(q_proj->forward(query), Tq);  // 1.
  const Tensor k = heads(k_proj->forward(key), Tk);
  const Tensor v = heads(v_proj->forward(value), Tk);
  const Tensor o = linear_attention(q, k, v, options.causal() || mask.is_causal(), mask.key_padding());  // 3.
  return out_proj->forward(o.transpose(1, 2).reshape({B, Tq, E}));  // 4.
}

std::string LinearAttentionImpl::repr() const {
  return "LinearAttention(embed_dim=" + std::to_string(options.embed_dim()) +
         ", num_heads=" + std::to_string(options.num_heads()) +
         ", bias=" + detail::py_bool(options.bias()) +
         ", causal=" + detail::py_bool(options.causal()) + ")";
}

}  // namespace heed::nn
