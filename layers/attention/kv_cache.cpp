// kv_cache.cpp - nn::KVCache: in-place appends into preallocated (B, H, max_len, d)
// storage, the size bookkeeping of reset and crop, and the row copies of reorder.
//
// Shape letters: B batch, H heads, t new tokens, d_k / d_v per-head widths.
#include "kv_cache.h"

#include <algorithm>
#include <cstring>

#include "../../autograd/engine/grad_mode.h"
#include "../../autograd/ops/attention/flash_attention.h"
#include "../../autograd/ops/shape.h"
#include "../../core/error.h"

namespace heed::nn {

namespace {
constexpr const char* kOp = "KVCache";
}  // namespace

void KVCache::write_rows(const real* src, const HeadLayout& s, real* dst, int64_t B, int64_t H,
                         int64_t L, int64_t d, int64_t at, int64_t t) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t r = 0; r < t; ++r)
        std::memcpy(dst + ((b * H + h) * L + at + r) * d,
                    src + s.at(b, h, r), d * sizeof(real));
}

KVCache::KVCache(int64_t batch, int64_t num_heads, int64_t max_len, int64_t head_dim_k,
                 int64_t head_dim_v) {
  HEED_CHECK(batch >= 1 && num_heads >= 1 && max_len >= 1 && head_dim_k >= 0 && head_dim_v >= 0,
             kOp, "batch, num_heads and max_len must be >= 1 and the head dims >= 0; got batch ",
             batch, ", num_heads ", num_heads, ", max_len ", max_len, ", head_dim_k ", head_dim_k,
             ", head_dim_v ", head_dim_v);
  keys_ = zeros({batch, num_heads, max_len, head_dim_k});
  values_ = zeros({batch, num_heads, max_len, head_dim_v});
}

// Deep: the copy owns its storage (kv_cache.h, "Copying").
KVCache::KVCache(const KVCache& other)
    : keys_(other.defined() ? other.keys_.detach().clone() : Tensor()),
      values_(other.defined() ? other.values_.detach().clone() : Tensor()),
      size_(other.size_),
      weights_(other.weights_),
      filler_(other.filler_) {}

KVCache& KVCache::operator=(const KVCache& other) {
  if (this != &other) *this = KVCache(other);  // copy, then move: nothing changes if it throws
  return *this;
}

// Names the cache and the argument: "KVCache: append: k is undefined".
static void check_inputs(const char* what, const Tensor& k, const Tensor& v, bool defined) {
  HEED_CHECK(defined, kOp, what, " to an undefined cache (default-constructed)");
  HEED_CHECK(k.defined(), kOp, what, ": k (the keys) is an undefined tensor");
  HEED_CHECK(v.defined(), kOp, what, ": v (the values) is an undefined tensor");
}

void KVCache::append(const Tensor& k, const Tensor& v) {
  check_inputs("append", k, v, defined());
  const int64_t B = batch(), H = num_heads(), dk = head_dim_k(), dv = head_dim_v();
  HEED_CHECK(k.dim() == 4 && v.dim() == 4 && k.size(0) == B && k.size(1) == H && k.size(3) == dk &&
                 v.size(0) == B && v.size(1) == H && v.size(3) == dv && v.size(2) == k.size(2),
             kOp, "append: k ", k.shape(), " and v ", v.shape(), " are not (B, H, t, d_k) and (B, H, t, d_v) = (",
             B, ", ", H, ", t, ", dk, ") and (", B, ", ", H, ", t, ", dv, ")");
  const int64_t t = k.size(2);
  append_rows(k, split_layout(H, t, dk), v, split_layout(H, t, dv), t);
}

void KVCache::append_heads(const Tensor& k, const Tensor& v, int64_t k_col, int64_t v_col) {
  check_inputs("append_heads", k, v, defined());
  const int64_t B = batch(), H = num_heads(), dk = head_dim_k(), dv = head_dim_v();
  HEED_CHECK(k.dim() == 3 && v.dim() == 3 && k.size(0) == B && v.size(0) == B &&
                 v.size(1) == k.size(1) && k_col >= 0 && v_col >= 0 &&
                 k_col + H * dk <= k.size(2) && v_col + H * dv <= v.size(2),
             kOp, "append_heads: k ", k.shape(), " from column ", k_col, " and v ", v.shape(),
             " from column ", v_col, " do not hold (B, t, H*d_k) and (B, t, H*d_v) with B = ", B,
             ", H = ", H, ", d_k = ", dk, ", d_v = ", dv);
  const int64_t t = k.size(1), wk = k.size(2), wv = v.size(2);
  append_rows(k, side_by_side(t, wk, dk, k_col), v, side_by_side(t, wv, dv, v_col), t);
}

// The checks every append shares, then the writes: rows [size(), size() + t).
void KVCache::append_rows(const Tensor& k, const HeadLayout& ks, const Tensor& v,
                          const HeadLayout& vs, int64_t t) {
  HEED_CHECK(!GradMode::enabled() || (!k.requires_grad() && !v.requires_grad()), kOp,
             "append: k or v requires grad with grad mode on; the cache stores values and no "
             "gradient flows through it: decode under heed::NoGradGuard (or append detach()ed "
             "tensors)");
  HEED_CHECK(t <= max_len() - size_, kOp, "append of ", t, " token(s) to ", size_,
             " cached overflows max_len ", max_len(), " (crop or reset first, or allocate more)");
  const int64_t B = batch(), H = num_heads(), L = max_len();
  write_rows(k.data(), ks, keys_.data(), B, H, L, head_dim_k(), size_, t);
  write_rows(v.data(), vs, values_.data(), B, H, L, head_dim_v(), size_, t);
  keys_.bump_version();  // a backward saved on the old contents must not read these
  values_.bump_version();
  size_ += t;
}

Tensor KVCache::attend(const Tensor& q, const AttentionMask& mask,
                       std::optional<double> scale) const {
  HEED_CHECK(defined(), kOp, "attend to an undefined cache (default-constructed)");
  HEED_CHECK(q.defined(), kOp, "attend: q (the queries) is an undefined tensor");
  return flash_attention_prefix(q, keys_, values_, size_, mask, scale);
}

// The filled part of a (B, H, max_len, d) buffer as a tensor of its own: narrow copies it,
// except when B = H = 1, where it is a block of the buffer (core/tensor.h, "Views"), so clone.
static Tensor filled_part(const Tensor& buffer, int64_t size) {
  Tensor part = narrow(buffer.detach(), 2, 0, size);
  return part.impl()->view.shares ? part.clone() : part.contiguous();  // contiguous: unmarked
}

Tensor KVCache::keys() const {
  HEED_CHECK(defined(), kOp, "keys() of an undefined cache");
  return filled_part(keys_, size_);  // (B, H, size, d_k)
}

Tensor KVCache::values() const {
  HEED_CHECK(defined(), kOp, "values() of an undefined cache");
  return filled_part(values_, size_);  // (B, H, size, d_v)
}

void KVCache::crop(int64_t len) {
  HEED_CHECK(len >= 0 && len <= size_, kOp, "crop to ", len, " tokens: must be in [0, size() = ",
             size_, "]");
  size_ = len;
}

void KVCache::reorder(const IndexTensor& rows) {
  HEED_CHECK(defined(), kOp, "reorder of an undefined cache");
  HEED_CHECK(rows.dim() == 1 && rows.numel() >= 1, kOp, "reorder: rows ", rows.shape(),
             " must be 1-D and non-empty");
  rows.check_range("KVCache::reorder", batch());
  const int64_t nB = rows.numel(), H = num_heads(), L = max_len();
  // Both new storages are built before either replaces the old one, so a failed allocation
  // leaves the cache as it was.
  auto gather = [&](const Tensor& s) {  // new row b = old row rows[b], first size_ positions
    const int64_t d = s.size(3);
    Tensor next = zeros({nB, H, L, d});  // (nB, H, L, d)
    const HeadLayout old = split_layout(H, L, d);
    for (int64_t b = 0; b < nB; ++b)
      write_rows(s.data() + rows[b] * old.batch, old, next.data() + b * H * L * d, 1, H, L, d, 0,
                 size_);
    return next;
  };
  Tensor keys = gather(keys_), values = gather(values_);
  keys_ = std::move(keys);
  values_ = std::move(values);
}

void KVCache::note_weights(const char* op, const std::vector<Tensor>& weights) {
  if (size_ == 0) {  // filling: these weights compute what is cached from now on
    weights_.clear();
    for (const Tensor& w : weights) weights_.emplace_back(w, w.version());
    return;
  }
  bool same = weights.size() == weights_.size();
  for (size_t i = 0; same && i < weights.size(); ++i)
    same = weights[i].impl() == weights_[i].first.impl() && weights[i].version() == weights_[i].second;
  HEED_CHECK(same, kOp, "the ", size_, " cached token(s) were computed with other weights: ", op,
             "'s projection weights changed since the cache was filled (an optimizer step, "
             "load_state_dict, or another layer); reset() the cache and run the prompt again");
}

void KVCache::note_filler(const char* op, const char* attention) {
  if (size_ == 0 || !filler_) {
    filler_ = attention;
    return;
  }
  HEED_CHECK(std::strcmp(filler_, attention) == 0, kOp, op, " used for ", attention, " a cache "
             "that holds ", size_, " token(s) of ", filler_, "; give each attention layer its "
             "own KVCache (or reset() this one first)");
}

KVCache::Rollback::~Rollback() {
  for (auto s = saved_.rbegin(); s != saved_.rend(); ++s) {  // newest first
    if (!s->defined) *s->cache = KVCache();
    else s->cache->size_ = s->size;
  }
}

void KVCache::Rollback::watch(KVCache* cache) {
  if (cache) saved_.push_back({cache, cache->defined(), cache->size()});
}

int64_t KVCache::bytes_per_token() const {
  return batch() * num_heads() * (head_dim_k() + head_dim_v()) * int64_t(sizeof(real));
}

int64_t KVCache::bytes() const { return bytes_per_token() * max_len(); }

}  // namespace heed::nn
