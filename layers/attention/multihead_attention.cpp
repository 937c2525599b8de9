// multihead_attention.cpp - nn::MultiheadAttention: project, split into heads, attend
// per head (scaled dot-product, autograd/ops/attention/scaled_dot_product.h), concatenate, project out;
// or, when the weights are not wanted, the same through the flash kernel with no copies
// (flash_context below).
//
// Shape letters: B batch, Tq / Tk query / key lengths, E embed_dim, H heads,
// d_k / d_v per-head widths.
#include "multihead_attention.h"

#include "../../autograd/ops/arith.h"
#include "../../autograd/ops/attention/flash_attention.h"
#include "../../autograd/engine/grad_mode.h"
#include "../../autograd/ops/linear.h"
#include "../../autograd/ops/reduce.h"
#include "../../autograd/ops/attention/scaled_dot_product.h"
#include "../../autograd/ops/shape.h"
#include "../../core/error.h"
#include "../init.h"
#include "../repr.h"

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

struct Projected {
  Tensor q, k, v;  // (B, Tq, H d_k), (B, Tk, H d_k), (B, Tk, H d_v)
};

// Q W^Q, K W^K, V W^V, a GEMM each: y = x W^T + b, W the rows of this projection (the
// packed weight holds Q's, K's and V's one after the other) or its separate weight.
Projected project(const MultiheadAttentionImpl& mha, const Tensor& query, const Tensor& key,
                  const Tensor& value) {
  const int64_t nq = mha.options.num_heads() * mha.options.head_dim_k();
  const int64_t nv = mha.options.num_heads() * mha.options.head_dim_v();
  const Tensor& W = mha.in_proj_weight;  // (2 H d_k + H d_v, E), packed form only
  const Tensor& b = mha.in_proj_bias;
  const bool packed = W.defined();
  return {linear(query, packed ? rows(W, 0, nq) : mha.q_proj_weight, rows(b, 0, nq)),
          linear(key, packed ? rows(W, nq, nq) : mha.k_proj_weight, rows(b, nq, nq)),
          linear(value, packed ? rows(W, 2 * nq, nv) : mha.v_proj_weight, rows(b, 2 * nq, nv))};
}

}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& opts) : options(opts) {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  HEED_CHECK(E > 0 && H > 0, kOp, "embed_dim and num_heads must be > 0, got ", E, " and ", H);
  HEED_CHECK(E % H == 0 || (options.head_dim_k() > 0 && options.head_dim_v() > 0), kOp,
             "embed_dim ", E, " is not divisible by num_heads ", H,
             " (or set head_dim_k and head_dim_v explicitly)");
  // A size <= 0 stands for its default; the options this module holds name the sizes it has.
  if (options.kdim() <= 0) options.kdim(E);
  if (options.vdim() <= 0) options.vdim(E);
  if (options.head_dim_k() <= 0) options.head_dim_k(E / H);
  if (options.head_dim_v() <= 0) options.head_dim_v(E / H);
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
                             Linear(LinearOptions(H * dv, E).bias(options.bias())));
  reset_parameters();
}

// torch's _reset_parameters: xavier_uniform_ on the packed (3E, E) weight as one matrix
// (fan_in E, fan_out 3E) or on each separate one; the biases 0. out_proj.weight keeps
// nn.Linear's kaiming_uniform_(a = sqrt(5)), which torch never overrides.
void MultiheadAttentionImpl::reset_parameters() {
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

// batch_first = false: (T, B, E) in and out, the batch-first computation between.
AttentionOutput MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key,
                                            const Tensor& value, const AttentionMask& mask,
                                            const Tensor& attn_bias, bool need_weights,
                                            bool average_attn_weights, KVCache* cache,
                                            Attending attending) {
  if (options.batch_first())
    return forward_batch_first(query, key, value, mask, attn_bias, need_weights, average_attn_weights, cache,
                               attending);
  HEED_CHECK(cache == nullptr, kOp, "cached decoding needs batch_first = true");
  for (const Tensor* x : {&query, &key, &value})
    HEED_CHECK(x->defined() && x->dim() == 3, kOp, "with batch_first = false, query, key and value must be "
               "defined and 3-D, (T, B, E)");
  AttentionOutput o = forward_batch_first(query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1), mask,
                                          attn_bias, need_weights, average_attn_weights, nullptr, attending);
  o.output = o.output.transpose(0, 1);  // (B, Tq, E) -> (Tq, B, E)
  return o;
}

AttentionOutput MultiheadAttentionImpl::forward_batch_first(const Tensor& query, const Tensor& key,
                                            const Tensor& value, const AttentionMask& mask,
                                            const Tensor& attn_bias, bool need_weights,
                                            bool average_attn_weights, KVCache* cache,
                                            Attending attending) {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  HEED_CHECK(query.dim() == 3 && query.size(2) == E, kOp, "query ", query.shape(),
             " is not (B, Tq, embed_dim = ", E, ")");
  HEED_CHECK(key.dim() == 3 && key.size(2) == options.kdim(), kOp, "key ", key.shape(),
             " is not (B, Tk, kdim = ", options.kdim(), ")");
  HEED_CHECK(value.dim() == 3 && value.size(2) == options.vdim(), kOp, "value ", value.shape(),
             " is not (B, Tk, vdim = ", options.vdim(), ")");
  const int64_t B = query.size(0), Tq = query.size(1);
  HEED_CHECK(key.size(0) == B && value.size(0) == B, kOp, "batch sizes differ: query ",
             query.shape(), ", key ", key.shape(), ", value ", value.shape());
  HEED_CHECK(value.size(1) == key.size(1), kOp, "key ", key.shape(), " and value ", value.shape(),
             " have different lengths Tk");
  HEED_CHECK(!cache || attending != Attending::unspecified, kOp,
             "forward with a KVCache must say which attention it is: pass nn::Attending::self "
             "(query, key and value the new tokens; their keys and values are appended) or "
             "nn::Attending::cross (key and value the memory, projected into the cache once) "
             "after the cache");
  const bool self = attending == Attending::self;
  if (cache) cache->note_filler(kOp, self ? "self-attention" : "cross-attention");
  HEED_CHECK(!cache || !self || key.size(1) == Tq, kOp, "self-attention with a KVCache: key ",
             key.shape(), " must hold the same ", Tq, " new tokens as query ", query.shape());
  const int64_t Tk = cache ? cached_keys(*cache, self, B, Tq, key.size(1)) : key.size(1);
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
  const BlockLayout& layout = options.block_layout();
  HEED_CHECK(!layout.defined() || (layout.q_len() == Tq && layout.k_len() == Tk &&
                                   (layout.heads() == 1 || layout.heads() == H)),
             kOp, "the block layout is for Tq ", layout.q_len(), ", Tk ", layout.k_len(), ", ",
             layout.heads(), " head(s); the scores are Tq ", Tq, ", Tk ", Tk, ", ", H, " heads",
             cache ? " (with a KVCache, Tk = the cached tokens + Tq grows every step, so one "
                     "layout fits one step only: decode without options.block_layout, or "
                     "build a layout for this step's (Tq, Tk))" : "");

  // The fast path: when the weights are not wanted (and no dropout acts on them, and no
  // bias is added), the tiled flash kernel computes the context without ever forming the
  // (Tq, Tk) weights, reading the heads where the projection (or the cache) leaves them.
  const bool fast = !need_weights && !attn_bias.defined() && !(options.dropout() > 0 && is_training());
  AttentionOutput out;
  if (fast && !cache) {
    out.output = out_proj->forward(flash_context(query, key, value, m));  // (B, Tq, E)
    return out;
  }

  // The composed path, the readable reference (tests/test_mha.cpp proves the fast path
  // equal to it in the output and every gradient; tests/test_kv_cache.cpp the cached one):
  // 1. Q W^Q, K W^K, V W^V for all heads at once; with a cache, K and V of the new tokens
  //    (self-attention) or of the memory on the first call (cross) go into it, and the
  //    keys and values attended to are everything it holds.
  Tensor q, k, v;  // (B, Tq, H d_k) (the first columns of [Q | K | V] (B, Tq, 3E)), (B, Tk, H d)
  KVCache::Rollback undo;  // a throw below leaves the cache as it was
  undo.watch(cache);
  if (cache) {
    q = project_into(*cache, self, query, key, value);
    if (fast) {  // the flash kernel reads Q in place and the cache's storage in place
      const FlashOptions tiles = FlashOptions().blocks(layout);
      out.output = out_proj->forward(heed::detail::flash_attention_heads_prefix_at(
          q, 0, cache->key_storage(), cache->value_storage(), Tk, m, {}, tiles));  // (B, Tq, E)
      undo.commit();
      return out;
    }
    if (q.size(2) != H * options.head_dim_k()) q = narrow(q, 2, 0, H * options.head_dim_k());
  } else {
    const Projected p = project(*this, query, key, value);  // (B, T, H d)
    q = p.q, k = p.k, v = p.v;
  }
  if (layout.defined())  // the dense form of block-sparse attention
    m.mask(m.mask().defined() ? mul(m.mask().detach(), layout.pattern()) : layout.pattern());

  // 2. head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V), all heads in one batched call
  const Attended heads = scaled_dot_product_attention(
      split_heads(q, H),                                     // (B, H, Tq, d_k)
      cache ? cache->keys() : split_heads(k, H),             // (B, H, Tk, d_k)
      cache ? cache->values() : split_heads(v, H),           // (B, H, Tk, d_v)
      m, attn_bias, options.dropout(), is_training());  // weights (B, H, Tq, Tk)
  if (need_weights)
    out.weights = average_attn_weights ? mean(heads.weights, 1) : heads.weights;

  // 3. Concat(head_1, ..., head_h) W^O + b^O
  out.output = out_proj->forward(merge_heads(heads.context));  // (B, Tq, E)
  undo.commit();
  return out;
}

// The number of keys a cached call attends to, after checking that the cache fits:
//   self-attention  size() + Tq: the cached tokens and the new ones
//   cross           size() once the memory is in (key must then have that length), else
//                   the memory's length Tk (an undefined cache is allocated on that call)
int64_t MultiheadAttentionImpl::cached_keys(const KVCache& cache, bool self, int64_t B, int64_t Tq,
                                        int64_t Tk) const {
  const int64_t H = options.num_heads(), dk = options.head_dim_k(), dv = options.head_dim_v();
  HEED_CHECK(cache.defined() || !self, kOp, "self-attention with an undefined KVCache: make one "
             "with KVCache(B, H, max_len, d_k, d_v) = (", B, ", ", H, ", max_len, ", dk, ", ", dv, ")");
  if (!cache.defined()) return Tk;
  HEED_CHECK(cache.batch() == B && cache.num_heads() == H && cache.head_dim_k() == dk &&
                 cache.head_dim_v() == dv,
             kOp, "the KVCache holds (B, H, d_k, d_v) = (", cache.batch(), ", ", cache.num_heads(),
             ", ", cache.head_dim_k(), ", ", cache.head_dim_v(), "); this call needs (", B, ", ", H,
             ", ", dk, ", ", dv, ")");
  if (self) return cache.size() + Tq;
  HEED_CHECK(cache.size() == 0 || cache.size() == Tk, kOp, "the cross-attention KVCache holds ",
             cache.size(), " memory keys but key has ", Tk, " (reset the cache for a new memory; "
             "self-attention is nn::Attending::self)");
  return cache.size() > 0 ? cache.size() : Tk;
}

// Step 1 with a cache. Returns Q's projection (B, Tq, H d_k), or [Q | K | V] (B, Tq, 3E) when
// one packed GEMM made all three (its first H d_k columns are Q), after writing into the cache
//   self-attention  K and V of the new tokens, appended (read in place from [Q | K | V])
//   cross           K and V of the memory, when the cache is empty (allocated if undefined,
//                   for exactly Tk keys); later calls project only Q
Tensor MultiheadAttentionImpl::project_into(KVCache& cache, bool self, const Tensor& query,
                                        const Tensor& key, const Tensor& value) {
  const int64_t H = options.num_heads(), dk = options.head_dim_k(), nq = H * dk;
  if (!cache.defined()) {  // cross, first call: allocated for exactly the memory's Tk keys
    cache = KVCache(query.size(0), H, key.size(1), dk, options.head_dim_v());
    cache.note_filler(kOp, "cross-attention");
  }
  // what K and V are computed with: refused when changed since the cache was filled
  std::vector<Tensor> kv_weights = {in_proj_weight.defined() ? in_proj_weight : k_proj_weight};
  if (!in_proj_weight.defined()) kv_weights.push_back(v_proj_weight);
  if (in_proj_bias.defined()) kv_weights.push_back(in_proj_bias);
  cache.note_weights(kOp, kv_weights);
  const bool one_tensor = query.impl() == key.impl() && key.impl() == value.impl();
  if (self && one_tensor && in_proj_weight.defined()) {
    const Tensor qkv = linear(query, in_proj_weight, in_proj_bias);  // [Q | K | V] (B, Tq, 3E)
    cache.append_heads(qkv, qkv, nq, 2 * nq);
    return qkv;
  }
  if (self || cache.size() == 0) {
    const Projected p = project(*this, query, key, value);  // (B, T, H d)
    cache.append_heads(p.k, p.v);
    return p.q;
  }
  const Tensor& W = in_proj_weight.defined() ? in_proj_weight : q_proj_weight;  // Q's rows first
  if (!GradMode::enabled())  // Q's rows of W and of the bias, read in place
    return heed::detail::linear_forward(
        query, W.data(), in_proj_bias.defined() ? in_proj_bias.data() : nullptr, nq);  // (B, Tq, H d_k)
  return linear(query, in_proj_weight.defined() ? rows(W, 0, nq) : W, rows(in_proj_bias, 0, nq));
}

// Steps 1-2 of the fast path -> Concat(head_1, ..., head_h) (B, Tq, H d_v), no copies:
//   self-attention (query, key and value one tensor) with the packed weight: ONE GEMM
//     [Q | K | V] = x W_in^T + b_in  (B, T, 3E), and the flash kernel reads each head's
//     columns of it in place; its backward writes dQ, dK, dV into one (B, T, 3E)
//     gradient, which the GEMM's backward takes whole
//   cross-attention to one memory (key and value one tensor), packed weight: a GEMM for
//     Q and one for [K | V] (B, Tk, 2E), both read in place
//   otherwise (key and value differ, kdim / vdim / d_k / d_v of their own): a GEMM each
//     for Q, K and V, still read in place, heads side by side
// Either way the context comes out as (B, Tq, H, d_v), which is Concat(heads) already.
Tensor MultiheadAttentionImpl::flash_context(const Tensor& query, const Tensor& key,
                                         const Tensor& value, const AttentionMask& m) {
  const int64_t H = options.num_heads();
  const FlashOptions tiles = FlashOptions().blocks(options.block_layout());  // undefined: dense
  const bool self = query.impl() == key.impl() && key.impl() == value.impl();
  if (self && in_proj_weight.defined())  // [Q | K | V] (B, T, 3E)
    return flash_attention_packed(linear(query, in_proj_weight, in_proj_bias), H, m, {}, tiles);
  if (key.impl() == value.impl() && in_proj_weight.defined()) {  // attending to one memory
    const int64_t E = options.embed_dim();
    const Tensor q = linear(query, rows(in_proj_weight, 0, E), rows(in_proj_bias, 0, E));  // (B, Tq, E)
    const Tensor kv = linear(key, rows(in_proj_weight, E, 2 * E), rows(in_proj_bias, E, 2 * E));
    return flash_attention_packed(q, kv, H, m, {}, tiles);  // kv = [K | V] (B, Tk, 2E)
  }
  const auto [q, k, v] = project(*this, query, key, value);  // (B, T, H d)
  return flash_attention_heads(q, k, v, H, m, {}, tiles);
}

std::string MultiheadAttentionImpl::repr() const {
  const MultiheadAttentionOptions& o = options;
  std::string s = "MultiheadAttention(embed_dim=" + std::to_string(o.embed_dim()) +
                  ", num_heads=" + std::to_string(o.num_heads());
  if (o.dropout() > 0) s += ", dropout=" + detail::py_float(o.dropout());
  if (!o.bias()) s += ", bias=False";
  if (!o.batch_first()) s += ", batch_first=False";
  if (o.kdim() != o.embed_dim()) s += ", kdim=" + std::to_string(o.kdim());
  if (o.vdim() != o.embed_dim()) s += ", vdim=" + std::to_string(o.vdim());
  if (o.num_heads() * o.head_dim_k() != o.embed_dim()) s += ", head_dim_k=" + std::to_string(o.head_dim_k());
  if (o.num_heads() * o.head_dim_v() != o.embed_dim()) s += ", head_dim_v=" + std::to_string(o.head_dim_v());
  return s + ")";
}

}  // namespace heed::nn
