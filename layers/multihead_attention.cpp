// multihead_attention.cpp - nn::MultiheadAttention: project, split into heads, attend
// per head (scaled dot-product, autograd/scaled_dot_product.h), concatenate, project out.
//
// Shape letters: B batch, Tq / Tk query / key lengths, E embed_dim, H heads,
// d_k / d_v per-head widths.
#include "multihead_attention.h"

#include "../autograd/flash_attention.h"
#include "../autograd/linear_op.h"
#include "../autograd/reduce.h"
#include "../autograd/scaled_dot_product.h"
#include "../autograd/shape_ops.h"
#include "../core/error.h"
#include "init.h"
#include "repr.h"

namespace heed::nn {

namespace {

constexpr const char* kOp = "MultiheadAttention";

// (B, T, H*D) -> (B, T, H, D) -> (B, H, T, D): head i gets columns [i D, (i+1) D)
Tensor split_heads(const Tensor& x, int64_t H) {
  return x.reshape({x.size(0), x.size(1), H, x.size(2) / H}).permute({0, 2, 1, 3});
}

// (B, H, T, D) -> (B, T, H, D) -> (B, T, H*D): Concat(head_1, ..., head_h)
Tensor merge_heads(const Tensor& x) {
  return x.permute({0, 2, 1, 3}).reshape({x.size(0), x.size(2), x.size(1) * x.size(3)});
}

// Rows [start, start + n) of a weight or bias; undefined stays undefined (no bias).
Tensor rows(const Tensor& t, int64_t start, int64_t n) {
  return t.defined() ? narrow(t, 0, start, n) : Tensor();
}

}  // namespace

MultiheadAttention::MultiheadAttention(const MultiheadAttentionOptions& opts) : options(opts) {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  HEED_CHECK(E > 0 && H > 0, kOp, "embed_dim and num_heads must be > 0, got ", E, " and ", H);
  HEED_CHECK(E % H == 0 || (!options.default_head_dim_k() && !options.default_head_dim_v()), kOp,
             "embed_dim ", E, " is not divisible by num_heads ", H,
             " (or set head_dim_k and head_dim_v explicitly)");
  HEED_CHECK(options.dropout() >= 0 && options.dropout() < 1, kOp,
             "dropout must be in [0, 1), got ", options.dropout());
  const int64_t dk = options.head_dim_k(), dv = options.head_dim_v();
  const int64_t kd = options.kdim(), vd = options.vdim();
  // Registered in torch's order: the projection weight(s), in_proj_bias, out_proj.*
  if (kd == E && vd == E && H * dk == E && H * dv == E) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * E, E}));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({H * dk, E}));
    k_proj_weight = register_parameter("k_proj_weight", empty({H * dk, kd}));
    v_proj_weight = register_parameter("v_proj_weight", empty({H * dv, vd}));
  }
  if (options.bias()) in_proj_bias = register_parameter("in_proj_bias", empty({2 * H * dk + H * dv}));
  out_proj = register_module("out_proj",
                             std::make_shared<Linear>(LinearOptions(H * dv, E).bias(options.bias())));
  reset_parameters();
}

// torch's _reset_parameters: xavier_uniform_ on the packed (3E, E) weight as one matrix
// (fan_in E, fan_out 3E) or on each separate one; the biases 0. out_proj.weight keeps
// nn.Linear's kaiming_uniform_(a = sqrt(5)), which torch never overrides.
void MultiheadAttention::reset_parameters() {
  out_proj->reset_parameters();
  if (in_proj_weight.defined()) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) init::zeros_(in_proj_bias);
  if (out_proj->bias.defined()) init::zeros_(out_proj->bias);
}

AttentionOutput MultiheadAttention::forward(const Tensor& query, const Tensor& key,
                                            const Tensor& value, const AttentionMask& mask,
                                            const Tensor& attn_bias, bool need_weights,
                                            bool average_attn_weights) {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  const int64_t dk = options.head_dim_k(), dv = options.head_dim_v();
  HEED_CHECK(query.dim() == 3 && query.size(2) == E, kOp, "query ", query.shape(),
             " is not (B, Tq, embed_dim = ", E, ")");
  HEED_CHECK(key.dim() == 3 && key.size(2) == options.kdim(), kOp, "key ", key.shape(),
             " is not (B, Tk, kdim = ", options.kdim(), ")");
  HEED_CHECK(value.dim() == 3 && value.size(2) == options.vdim(), kOp, "value ", value.shape(),
             " is not (B, Tk, vdim = ", options.vdim(), ")");
  const int64_t B = query.size(0), Tq = query.size(1), Tk = key.size(1);
  HEED_CHECK(key.size(0) == B && value.size(0) == B, kOp, "batch sizes differ: query ",
             query.shape(), ", key ", key.shape(), ", value ", value.shape());
  HEED_CHECK(value.size(1) == Tk, kOp, "key ", key.shape(), " and value ", value.shape(),
             " have different lengths Tk");
  AttentionMask m = mask;  // a 3-D mask (B, Tq, Tk) is per batch element: (B, 1, Tq, Tk)
  if (m.mask().defined() && m.mask().dim() == 3) {
    const Shape& ms = m.mask().shape();
    HEED_CHECK((ms[0] == B || ms[0] == 1) && (ms[1] == Tq || ms[1] == 1) && (ms[2] == Tk || ms[2] == 1),
               kOp, "3-D mask ", ms, " is not (B, Tq, Tk) = (", B, ",", Tq, ",", Tk, ")");
    m.mask(m.mask().unsqueeze(1));
  }
  check_mask(kOp, {B, H, Tq, Tk}, m);
  HEED_CHECK(!attn_bias.defined() || attn_bias.dim() != 3, kOp, "3-D attn_bias ",
             attn_bias.shape(), " is ambiguous: pass (1, H, Tq, Tk) for a bias per head (ALiBi: "
             "unsqueeze(0)), (B, 1, Tq, Tk) for one per batch element, or (B, H, Tq, Tk) "
             "(torch's (B*H, Tq, Tk) float attn_mask, reshaped)");
  check_bias(kOp, {B, H, Tq, Tk}, attn_bias);

  // 1. Q W^Q, K W^K, V W^V for all heads at once: y = x W^T + b, W the rows of this
  //    projection (the packed weight holds Q's, K's and V's one after the other)
  const int64_t nq = H * dk, nv = H * dv;
  const bool packed = in_proj_weight.defined();
  const Tensor Wq = packed ? rows(in_proj_weight, 0, nq) : q_proj_weight;       // (H d_k, E)
  const Tensor Wk = packed ? rows(in_proj_weight, nq, nq) : k_proj_weight;      // (H d_k, kdim)
  const Tensor Wv = packed ? rows(in_proj_weight, 2 * nq, nv) : v_proj_weight;  // (H d_v, vdim)
  const Tensor q = linear(query, Wq, rows(in_proj_bias, 0, nq));        // (B, Tq, H d_k)
  const Tensor k = linear(key, Wk, rows(in_proj_bias, nq, nq));         // (B, Tk, H d_k)
  const Tensor v = linear(value, Wv, rows(in_proj_bias, 2 * nq, nv));   // (B, Tk, H d_v)

  // 2. head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V), all heads in one batched call.
  //    When the weights are not wanted (and no dropout acts on them, and no bias is
  //    added), the tiled flash kernel computes the same context without ever forming
  //    the (Tq, Tk) weights.
  AttentionOutput out;
  Tensor context;  // (B, H, Tq, d_v)
  if (!need_weights && !attn_bias.defined() && !(options.dropout() > 0 && is_training())) {
    context = flash_attention(split_heads(q, H), split_heads(k, H), split_heads(v, H), m);
  } else {
    const Attended heads = scaled_dot_product_attention(
        split_heads(q, H), split_heads(k, H), split_heads(v, H),  // (B, H, T, d)
        m, attn_bias, options.dropout(), is_training());  // weights (B, H, Tq, Tk)
    context = heads.context;
    if (need_weights)
      out.weights = average_attn_weights ? mean(heads.weights, 1) : heads.weights;
  }

  // 3. Concat(head_1, ..., head_h) W^O + b^O
  out.output = out_proj->forward(merge_heads(context));  // (B, Tq, E)
  return out;
}

std::string MultiheadAttention::repr() const {
  const MultiheadAttentionOptions& o = options;
  std::string s = "MultiheadAttention(embed_dim=" + std::to_string(o.embed_dim()) +
                  ", num_heads=" + std::to_string(o.num_heads());
  if (o.dropout() > 0) s += ", dropout=" + detail::py_float(o.dropout());
  if (!o.bias()) s += ", bias=False";
  if (o.kdim() != o.embed_dim()) s += ", kdim=" + std::to_string(o.kdim());
  if (o.vdim() != o.embed_dim()) s += ", vdim=" + std::to_string(o.vdim());
  if (!o.default_head_dim_k()) s += ", head_dim_k=" + std::to_string(o.head_dim_k());
  if (!o.default_head_dim_v()) s += ", head_dim_v=" + std::to_string(o.head_dim_v());
  return s + ")";
}

}  // namespace heed::nn
