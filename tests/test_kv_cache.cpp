// test_kv_cache.cpp - nn::KVCache and incremental decoding: the cache's storage and
// bookkeeping (append, crop, reorder, memory), the flash kernel reading a prefix of it in
// place against the same keys copied out, and every error naming KVCache.
#include <string>
#include <utility>
#include <vector>

#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/arith.h>
#include <heed/core/random.h>
#include <heed/layers/attention/kv_cache.h>
#include <heed/layers/attention/multihead_attention.h>
#include <heed/layers/transformer_decoder.h>
#include <heed/layers/attention/positional.h>
#include <heed/autograd/ops/indexing.h>
#include "helpers.h"

using namespace heed;
using heed::nn::AttentionMask;
using heed::nn::KVCache;
using heed::test::allclose;
using heed::test::error_of;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// x (B, H, T, d) positions [from, from + n)
Tensor positions(const Tensor& x, int64_t from, int64_t n) { return narrow(x, 2, from, n); }

}  // namespace

TEST_CASE("KVCache: appends in place, keys()/values() are every token so far, in order") {
  manual_seed(1);
  const int64_t B = 2, H = 3, L = 10, dk = 4, dv = 5;
  const Tensor k = randn({B, H, 7, dk}), v = randn({B, H, 7, dv});  // 7 tokens, fed 3 + 1 + 3
  KVCache cache(B, H, L, dk, dv);
  CHECK(cache.defined());
  CHECK(cache.size() == 0);
  CHECK(cache.max_len() == L);
  const real* storage = cache.key_storage().data();
  int64_t at = 0;
  for (int64_t t : {3, 1, 3}) {
    cache.append(positions(k, at, t), positions(v, at, t));
    at += t;
    CHECK(cache.size() == at);
    CHECK(cache.key_storage().data() == storage);  // the same buffer: written in place
    CHECK(allclose(cache.keys(), positions(k, 0, at), 0, 0));
    CHECK(allclose(cache.values(), positions(v, 0, at), 0, 0));
  }
  CHECK(cache.key_storage().shape() == Shape{B, H, L, dk});
  CHECK(cache.value_storage().shape() == Shape{B, H, L, dv});
}

TEST_CASE("KVCache: append_heads reads heads side by side, from a column offset") {
  manual_seed(2);
  const int64_t B = 2, H = 2, t = 3, dk = 3, dv = 2;
  // one (B, t, 3 + H dk + H dv) tensor: 3 columns of something else, then K's heads, V's heads
  const Tensor x = randn({B, t, 3 + H * dk + H * dv});
  KVCache a(B, H, 4, dk, dv), b(B, H, 4, dk, dv);
  a.append_heads(x, x, 3, 3 + H * dk);
  // the same through the split form: (B, t, H*d) -> (B, H, t, d)
  auto split = [&](int64_t col, int64_t d) {
    return narrow(x, 2, col, H * d).reshape({B, t, H, d}).permute({0, 2, 1, 3});
  };
  b.append(split(3, dk), split(3 + H * dk, dv));
  CHECK(allclose(a.keys(), b.keys(), 0, 0));
  CHECK(allclose(a.values(), b.values(), 0, 0));
}

TEST_CASE("KVCache: memory is B * H * (d_k + d_v) * sizeof(real) per token") {
  KVCache cache(8, 6, 512, 64, 32);
  CHECK(cache.bytes_per_token() == 8 * 6 * (64 + 32) * int64_t(sizeof(real)));
  CHECK(cache.bytes() == cache.bytes_per_token() * 512);
  CHECK(cache.bytes() == (cache.key_storage().numel() + cache.value_storage().numel()) *
                             int64_t(sizeof(real)));
  CHECK(KVCache().bytes() == 0);
}

TEST_CASE("KVCache: reset and crop forget tokens; re-appending equals a fresh cache") {
  manual_seed(3);
  const int64_t B = 2, H = 2, d = 3;
  const Tensor k = randn({B, H, 6, d}), v = randn({B, H, 6, d});
  const Tensor k2 = randn({B, H, 2, d}), v2 = randn({B, H, 2, d});
  KVCache cache(B, H, 8, d, d), fresh(B, H, 8, d, d);
  cache.append(k, v);
  cache.crop(4);
  CHECK(cache.size() == 4);
  cache.append(k2, v2);  // tokens 4, 5 replaced
  fresh.append(positions(k, 0, 4), positions(v, 0, 4));
  fresh.append(k2, v2);
  CHECK(allclose(cache.keys(), fresh.keys(), 0, 0));
  CHECK(allclose(cache.values(), fresh.values(), 0, 0));
  cache.crop(6);  // no-op at size
  CHECK(cache.size() == 6);
  cache.reset();
  CHECK(cache.size() == 0);
  cache.append(k2, v2);
  CHECK(allclose(cache.keys(), k2, 0, 0));
}

TEST_CASE("KVCache: reorder makes row b the old row rows[b], also to a new batch size") {
  manual_seed(4);
  const int64_t B = 3, H = 2, d = 2;
  const Tensor k = randn({B, H, 4, d}), v = randn({B, H, 4, d});
  KVCache cache(B, H, 6, d, d);
  cache.append(k, v);
  const IndexTensor rows({2, 0, 0});
  cache.reorder(rows);
  CHECK(allclose(cache.keys(), index_select(k, 0, rows), 0, 0));
  CHECK(allclose(cache.values(), index_select(v, 0, rows), 0, 0));
  CHECK(cache.size() == 4);
  CHECK(cache.max_len() == 6);
  const IndexTensor beams({1, 1, 1, 1, 2});  // 3 rows -> 5
  cache.reorder(beams);
  CHECK(cache.batch() == 5);
  CHECK(allclose(cache.keys(), index_select(index_select(k, 0, rows), 0, beams), 0, 0));
  const Tensor more = randn({5, H, 2, d});
  cache.append(more, more);  // appends continue after a reorder
  CHECK(allclose(positions(cache.keys(), 4, 2), more, 0, 0));
}

TEST_CASE("flash attention over a cache's prefix equals flash and composed attention on the copied keys") {
  manual_seed(5);
  const int64_t B = 2, H = 3, L = 11, D = 4, Dv = 3;
  const Tensor ks = randn({B, H, L, D}), vs = randn({B, H, L, Dv});  // storage, partly "filled"
  for (auto [Tq, Tk] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 7}, {4, 7}, {7, 7}, {3, 11}}) {
    Tensor pad = ones({B, Tk});
    pad.data()[0] = 0;  // row 0 hides key 0
    for (const AttentionMask& m : {AttentionMask(), AttentionMask().causal(),
                                   AttentionMask().causal().key_padding(pad)})
      for (const FlashOptions& opt : {FlashOptions(), FlashOptions().rows(2).cols(3)}) {
        CAPTURE(Tq); CAPTURE(Tk); CAPTURE(m.is_causal());
        const Tensor k = positions(ks, 0, Tk), v = positions(vs, 0, Tk);  // (B, H, Tk, d)
        const Tensor q = randn({B, H, Tq, D});
        const Tensor ref = flash_attention(q, k, v, m, {}, opt);
        CHECK(allclose(flash_attention_prefix(q, ks, vs, Tk, m, {}, opt), ref, 1e-5, 1e-6));
        CHECK(allclose(flash_attention_composed(q, k, v, m), ref, 1e-5, 1e-6));
        // heads side by side: (B, Tq, H*D) in, (B, Tq, H*Dv) out
        const Tensor qs = q.permute({0, 2, 1, 3}).reshape({B, Tq, H * D});
        const Tensor os = ref.permute({0, 2, 1, 3}).reshape({B, Tq, H * Dv});
        CHECK(allclose(flash_attention_heads_prefix(qs, ks, vs, Tk, m, {}, opt), os, 1e-5, 1e-6));
      }
  }
}

TEST_CASE("flash attention over a prefix: gradients equal those through the copied keys, zero past len") {
  manual_seed(6);
  const int64_t B = 2, H = 2, L = 9, Tk = 6, Tq = 3, D = 3;
  const Tensor ks = randn({B, H, L, D}).requires_grad_(), vs = randn({B, H, L, D}).requires_grad_();
  const Tensor q = randn({B, H, Tq, D}).requires_grad_(), w = randn({B, H, Tq, D});
  const AttentionMask m = AttentionMask().causal();
  sum(flash_attention_prefix(q, ks, vs, Tk, m, {}, FlashOptions().rows(2).cols(2)) * w).backward();
  const Tensor dq = q.grad(), dk = ks.grad(), dv = vs.grad();
  for (const Tensor& t : {q, ks, vs}) t.set_grad(Tensor());
  sum(flash_attention_composed(q, positions(ks, 0, Tk), positions(vs, 0, Tk), m) * w).backward();
  CHECK(allclose(dq, q.grad(), 1e-4, 1e-5));
  CHECK(allclose(dk, ks.grad(), 1e-4, 1e-5));
  CHECK(allclose(dv, vs.grad(), 1e-4, 1e-5));
  CHECK(allclose(positions(dk, Tk, L - Tk), zeros({B, H, L - Tk, D}), 0, 0));
}

TEST_CASE("KVCache::attend equals attention to keys() and values()") {
  manual_seed(7);
  const int64_t B = 2, H = 2, d = 4;
  KVCache cache(B, H, 16, d, d);
  NoGradGuard no_grad;
  cache.append(randn({B, H, 5, d}), randn({B, H, 5, d}));
  const Tensor q = randn({B, H, 2, d});
  for (const AttentionMask& m : {AttentionMask(), AttentionMask().causal()})
    CHECK(allclose(cache.attend(q, m), flash_attention_composed(q, cache.keys(), cache.values(), m),
                   1e-5, 1e-6));
}

TEST_CASE("KVCache: a backward recorded on old contents fails after an append") {
  manual_seed(8);
  KVCache cache(1, 1, 4, 2, 2);
  cache.append(randn({1, 1, 2, 2}), randn({1, 1, 2, 2}));
  const Tensor q = randn({1, 1, 1, 2}).requires_grad_();
  const Tensor o = cache.attend(q);  // saves the storage for backward
  cache.append(randn({1, 1, 1, 2}), randn({1, 1, 1, 2}));
  CHECK(contains(error_of([&] { sum(o).backward(); }), "modified"));
}

TEST_CASE("KVCache: errors name KVCache and the offending values; nothing is written on error") {
  const int64_t B = 2, H = 2, d = 3;
  CHECK(contains(error_of([] { KVCache(0, 2, 4, 3, 3); }), "KVCache"));
  CHECK(contains(error_of([] { KVCache(1, 2, 0, 3, 3); }), "max_len 0"));
  CHECK(contains(error_of([] { KVCache().append(zeros({1, 1, 1, 1}), zeros({1, 1, 1, 1})); }),
                 "undefined"));
  KVCache cache(B, H, 4, d, d);
  cache.append(zeros({B, H, 3, d}), zeros({B, H, 3, d}));
  // overflow past max_len
  const std::string over = error_of([&] { cache.append(zeros({B, H, 2, d}), zeros({B, H, 2, d})); });
  CHECK(contains(over, "KVCache"));
  CHECK(contains(over, "overflows max_len 4"));
  CHECK(cache.size() == 3);
  // shapes
  CHECK(contains(error_of([&] { cache.append(zeros({B, H, 1, d + 1}), zeros({B, H, 1, d})); }),
                 "(2,2,1,4)"));
  CHECK(contains(error_of([&] { cache.append(zeros({B + 1, H, 1, d}), zeros({B + 1, H, 1, d})); }),
                 "KVCache"));
  CHECK(contains(error_of([&] { cache.append(zeros({B, H, 1, d}), zeros({B, H, 2, d})); }), "KVCache"));
  CHECK(contains(error_of([&] { cache.append_heads(zeros({B, 1, H * d}), zeros({B, 1, H * d}), 1); }),
                 "column 1"));
  CHECK(cache.size() == 3);
  // crop
  CHECK(contains(error_of([&] { cache.crop(4); }), "crop to 4"));
  CHECK(contains(error_of([&] { cache.crop(-1); }), "crop to -1"));
  // reorder
  CHECK(contains(error_of([&] { cache.reorder(IndexTensor({0, 2})); }), "KVCache::reorder"));
  CHECK(contains(error_of([&] { cache.reorder(IndexTensor({-1})); }), "KVCache::reorder"));
  CHECK(contains(error_of([&] { cache.reorder(IndexTensor(std::vector<int64_t>{})); }), "non-empty"));
  CHECK(contains(error_of([&] { cache.reorder(IndexTensor({0, 1}, {1, 2})); }), "1-D"));
  // grad mode on with k requiring grad: refused, not silently detached
  const Tensor kg = zeros({B, H, 1, d}).requires_grad_();
  CHECK(contains(error_of([&] { cache.append(kg, zeros({B, H, 1, d})); }), "NoGradGuard"));
  {
    NoGradGuard no_grad;
    cache.append(kg, zeros({B, H, 1, d}));  // allowed while decoding
  }
  CHECK(cache.size() == 4);
  // the flash entry's len
  CHECK(contains(error_of([&] {
                   flash_attention_prefix(zeros({B, H, 1, d}), cache.key_storage(), cache.value_storage(), 5);
                 }),
                 "len 5"));
  CHECK(contains(error_of([&] {
                   flash_attention_heads_prefix(zeros({B, 1, d}), cache.key_storage(), cache.value_storage(), 2);
                 }),
                 "flash_attention_heads_prefix"));
}

// ---- nn::MultiheadAttention with a cache -------------------------------------------------

namespace {

// Splits of T tokens fed one call each: all at once, one at a time, a prompt then singles.
std::vector<std::vector<int64_t>> chunkings(int64_t T) {
  std::vector<std::vector<int64_t>> all = {{T}, std::vector<int64_t>(T, 1), {5}, {3}};
  while (all[2].size() < size_t(T - 4)) all[2].push_back(1);  // 5, 1, 1, ...
  for (int64_t n = 3; n < T; n += 3) all[3].push_back(std::min<int64_t>(3, T - n));  // 3, 3, ...
  return all;
}

// Self-attention of x (B, T, E), fed chunk by chunk through a cache, against one causal
// forward over all T: the outputs of every position, and (need_weights) the weights rows.
void check_self_attention(nn::MultiheadAttentionImpl& mha, const Tensor& x, const Tensor& pad,
                          bool need_weights) {
  const int64_t B = x.size(0), T = x.size(1), H = mha.options.num_heads();
  AttentionMask full_mask = AttentionMask().causal();
  if (pad.defined()) full_mask.key_padding(pad);
  NoGradGuard no_grad;
  const nn::AttentionOutput full = mha.forward(x, x, x, full_mask, {}, need_weights, true);
  for (const auto& chunks : chunkings(T)) {
    KVCache cache(B, H, T + 2, mha.options.head_dim_k(), mha.options.head_dim_v());
    int64_t at = 0;
    for (int64_t t : chunks) {
      CAPTURE(at); CAPTURE(t); CAPTURE(need_weights); CAPTURE(chunks.size());
      const Tensor xt = narrow(x, 1, at, t);  // (B, t, E)
      AttentionMask m = AttentionMask().causal();
      if (pad.defined()) m.key_padding(narrow(pad, 1, 0, at + t));  // (B, at + t)
      const nn::AttentionOutput step = mha.forward(xt, xt, xt, m, {}, need_weights, true, &cache, nn::Attending::self);
      CHECK(cache.size() == at + t);
      CHECK(allclose(step.output, narrow(full.output, 1, at, t), 1e-5, 1e-5));
      if (need_weights)  // rows at .. at+t-1 of the full weights, over the keys seen so far
        CHECK(allclose(step.weights, narrow(narrow(full.weights, 1, at, t), 2, 0, at + t), 1e-5, 1e-6));
      at += t;
    }
  }
}

}  // namespace

TEST_CASE("MultiheadAttention with a KV cache equals the full causal forward at every position") {
  manual_seed(11);
  const int64_t B = 2, T = 9, E = 8;
  const Tensor x = randn({B, T, E});
  Tensor pad = ones({B, T});  // row 1 hides keys 0 and 4
  pad.data()[T] = 0, pad.data()[T + 4] = 0;
  // packed (3E, E) weight: one GEMM appends from [Q | K | V]; separate weights: head dims 3 / 5
  for (const nn::MultiheadAttentionOptions& o :
       {nn::MultiheadAttentionOptions(E, 2), nn::MultiheadAttentionOptions(E, 2).head_dim_k(3).head_dim_v(5),
        nn::MultiheadAttentionOptions(E, 4).bias(false)}) {
    nn::MultiheadAttention mha(o);
    for (bool need_weights : {false, true}) {  // the flash path and the composed reference
      check_self_attention(*mha, x, Tensor(), need_weights);
      check_self_attention(*mha, x, pad, need_weights);
    }
  }
}

TEST_CASE("MultiheadAttention cross-attention: the memory projected once, cached equals uncached") {
  manual_seed(12);
  const int64_t B = 2, Ts = 6, E = 8;
  const Tensor y = randn({B, 5, E});
  Tensor mem_pad = ones({B, Ts});
  mem_pad.data()[Ts + 5] = 0;
  for (const nn::MultiheadAttentionOptions& o :
       {nn::MultiheadAttentionOptions(E, 2), nn::MultiheadAttentionOptions(E, 2).kdim(6).vdim(7)}) {
    nn::MultiheadAttention mha(o);
    const Tensor mk = randn({B, Ts, o.kdim()}), mv = o.kdim() == E ? mk : randn({B, Ts, o.vdim()});
    for (bool need_weights : {false, true}) {
      NoGradGuard no_grad;
      KVCache cache;  // undefined: allocated on the first call for Ts keys
      const AttentionMask m = AttentionMask().key_padding(mem_pad);
      int64_t at = 0;
      for (int64_t t : {2, 1, 1, 1}) {
        const Tensor yt = narrow(y, 1, at, t);
        const nn::AttentionOutput ref = mha->forward(yt, mk, mv, m, {}, need_weights);
        const nn::AttentionOutput got = mha->forward(yt, mk, mv, m, {}, need_weights, true, &cache, nn::Attending::cross);
        CHECK(cache.size() == Ts);
        CHECK(cache.max_len() == Ts);
        CHECK(allclose(got.output, ref.output, 1e-5, 1e-6));
        if (need_weights) CHECK(allclose(got.weights, ref.weights, 1e-5, 1e-6));
        at += t;
      }
      // later calls read the cache, not key: a different memory of the same shape is ignored
      const Tensor y1 = narrow(y, 1, 0, 1);
      const Tensor before = mha->forward(y1, mk, mv, m, {}, need_weights, true, &cache, nn::Attending::cross).output;
      CHECK(allclose(mha->forward(y1, mk * 2, mv * 2, m, {}, need_weights, true, &cache, nn::Attending::cross).output, before, 0, 0));
    }
  }
}

TEST_CASE("MultiheadAttention with a cache: errors name the op and the values") {
  manual_seed(13);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  const Tensor x = randn({2, 3, 8}), mem = randn({2, 5, 8});
  {
    NoGradGuard no_grad;
    KVCache none;
    CHECK(contains(error_of([&] { mha->forward(x, x, x, {}, {}, false, true, &none, nn::Attending::self); }),
                   "self-attention with an undefined KVCache"));
    KVCache wrong_heads(2, 4, 8, 2, 2);
    CHECK(contains(error_of([&] { mha->forward(x, x, x, {}, {}, false, true, &wrong_heads, nn::Attending::self); }),
                   "(2, 4, 2, 2)"));
    KVCache small(2, 2, 4, 4, 4);
    mha->forward(x, x, x, AttentionMask().causal(), {}, false, true, &small, nn::Attending::self);
    const std::string over = error_of([&] { mha->forward(x, x, x, {}, {}, false, true, &small, nn::Attending::self); });
    CHECK(contains(over, "KVCache"));
    CHECK(contains(over, "overflows max_len 4"));
    CHECK(small.size() == 3);
    // the mask is for (Tq, size() + Tq) keys
    KVCache c(2, 2, 8, 4, 4);
    mha->forward(x, x, x, {}, {}, false, true, &c, nn::Attending::self);
    CHECK(contains(error_of([&] { mha->forward(x, x, x, AttentionMask().key_padding(ones({2, 3})),
                                               {}, false, true, &c, nn::Attending::self); }),
                   "MultiheadAttention"));
    CHECK(c.size() == 3);  // nothing appended by the failed call
    KVCache cross;
    mha->forward(x, mem, mem, {}, {}, false, true, &cross, nn::Attending::cross);
    const Tensor other = randn({2, 4, 8});
    CHECK(contains(error_of([&] { mha->forward(x, other, other, {}, {}, false, true, &cross, nn::Attending::cross); }),
                   "holds 5 memory keys but key has 4"));
  }
  KVCache c(2, 2, 8, 4, 4);  // grad mode on, parameters require grad: refused
  CHECK(contains(error_of([&] { mha->forward(x, x, x, {}, {}, false, true, &c, nn::Attending::self); }), "NoGradGuard"));
  CHECK(c.size() == 0);
}

// ---- nn::TransformerDecoder with a cache --------------------------------------------------

namespace {

nn::TransformerDecoder small_decoder(bool norm_first) {
  auto dec = nn::TransformerDecoder(nn::TransformerDecoderOptions(
      nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16).norm_first(norm_first), 2)
                                                          .norm(true));
  dec->eval();  // dropout 0.1 by default: off
  return dec;
}

// Feeds tgt[:, from : from + sum(chunks)] through the cache, checking each step's output
// against the same rows of `full`.
void decode_and_check(nn::TransformerDecoderImpl& dec, nn::TransformerDecoderCache& cache,
                      const Tensor& tgt, const Tensor& memory, const AttentionMask& mem_mask,
                      const Tensor& full, int64_t from, const std::vector<int64_t>& chunks) {
  int64_t at = from;
  for (int64_t t : chunks) {
    CAPTURE(at); CAPTURE(t);
    const Tensor y = dec.forward(narrow(tgt, 1, at, t), memory, AttentionMask().causal(), mem_mask, &cache);
    CHECK(allclose(y, narrow(full, 1, at, t), 1e-5, 1e-5));
    at += t;
    CHECK(cache.size() == at);
  }
}

}  // namespace

TEST_CASE("TransformerDecoder with a cache equals the full causal forward, step by step") {
  manual_seed(21);
  const int64_t B = 2, T = 8, Ts = 5, E = 8;
  const Tensor tgt = randn({B, T, E}), memory = randn({B, Ts, E});
  Tensor mem_pad = ones({B, Ts});
  mem_pad.data()[Ts + 3] = 0;
  const AttentionMask mem_mask = AttentionMask().key_padding(mem_pad);
  for (bool norm_first : {false, true}) {
    CAPTURE(norm_first);
    auto dec = small_decoder(norm_first);
    NoGradGuard no_grad;
    const Tensor full = dec->forward(tgt, memory, AttentionMask().causal(), mem_mask);  // (B, T, E)
    for (const auto& chunks : chunkings(T)) {
      nn::TransformerDecoderCache cache = dec->make_cache(B, T);
      decode_and_check(*dec, cache, tgt, memory, mem_mask, full, 0, chunks);
      CHECK(cache.layers[1].cross_attn.size() == Ts);
    }
    // memory: 2 layers x (self: B H (d_k + d_v) per token, cross: the same for Ts tokens)
    nn::TransformerDecoderCache cache = dec->make_cache(B, T);
    CHECK(cache.bytes_per_token() == 2 * B * 2 * E * int64_t(sizeof(real)));
    CHECK(cache.bytes() == cache.bytes_per_token() * T);
    dec->forward(narrow(tgt, 1, 0, 1), memory, AttentionMask().causal(), mem_mask, &cache);
    CHECK(cache.bytes() == cache.bytes_per_token() * (T + Ts));
    // reset: a new memory of another length, decoded afresh
    cache.reset();
    CHECK(cache.size() == 0);
    const Tensor memory2 = randn({B, 3, E});
    const Tensor full2 = dec->forward(tgt, memory2, AttentionMask().causal());
    decode_and_check(*dec, cache, tgt, memory2, {}, full2, 0, {3, 1, 1, 1, 1, 1});
  }
}

TEST_CASE("TransformerDecoder cache: reorder then continue equals the reordered batch from scratch") {
  manual_seed(22);
  const int64_t B = 3, T = 7, Ts = 4, E = 8;
  const Tensor tgt = randn({B, T, E}), memory = randn({B, Ts, E});
  Tensor mem_pad = ones({B, Ts});
  mem_pad.data()[Ts + 3] = 0;  // row 1 hides its last source token
  auto dec = small_decoder(false);
  NoGradGuard no_grad;
  for (const IndexTensor& rows : {IndexTensor({2, 0, 1}), IndexTensor({1, 1, 0, 1})}) {  // a permutation; 3 -> 4 beams
    nn::TransformerDecoderCache cache = dec->make_cache(B, T);
    dec->forward(narrow(tgt, 1, 0, 4), memory, AttentionMask().causal(),
                 AttentionMask().key_padding(mem_pad), &cache);
    cache.reorder(rows);
    // from scratch: the reordered rows, every position
    const Tensor tgt_r = index_select(tgt, 0, rows), mem_r = index_select(memory, 0, rows);
    const AttentionMask mask_r = AttentionMask().key_padding(index_select(mem_pad, 0, rows));
    const Tensor full_r = dec->forward(tgt_r, mem_r, AttentionMask().causal(), mask_r);
    decode_and_check(*dec, cache, tgt_r, mem_r, mask_r, full_r, 4, {1, 1, 1});
  }
}

TEST_CASE("TransformerDecoder cache: crop then re-append equals a fresh decode") {
  manual_seed(23);
  const int64_t B = 2, T = 6, E = 8;
  const Tensor a = randn({B, T, E}), memory = randn({B, 4, E});
  Tensor b = a.clone();  // b shares a's first 3 tokens, then differs
  for (int64_t i = 0; i < B; ++i)
    for (int64_t t = 3; t < T; ++t)
      for (int64_t e = 0; e < E; ++e) b.data()[(i * T + t) * E + e] += real(0.5);
  auto dec = small_decoder(true);
  NoGradGuard no_grad;
  nn::TransformerDecoderCache cache = dec->make_cache(B, T);
  dec->forward(a, memory, AttentionMask().causal(), {}, &cache);  // all of a
  cache.crop(3);
  CHECK(cache.size() == 3);
  const Tensor full_b = dec->forward(b, memory, AttentionMask().causal());
  decode_and_check(*dec, cache, b, memory, {}, full_b, 3, {2, 1});
}

TEST_CASE("TransformerDecoder cache: errors") {
  auto dec = small_decoder(false);
  const Tensor x = randn({2, 3, 8}), memory = randn({2, 4, 8});
  NoGradGuard no_grad;
  nn::TransformerDecoderCache cache = dec->make_cache(2, 4);
  cache.layers.pop_back();
  CHECK(contains(error_of([&] { dec->forward(x, memory, AttentionMask().causal(), {}, &cache); }),
                 "the cache has 1 layers, the decoder 2"));
  cache = dec->make_cache(2, 4);
  dec->forward(x, memory, AttentionMask().causal(), {}, &cache);
  CHECK(contains(error_of([&] { dec->forward(x, memory, AttentionMask().causal(), {}, &cache); }),
                 "overflows max_len 4"));
  CHECK(contains(error_of([&] { cache.crop(5); }), "crop to 5"));
  CHECK(contains(error_of([&] { cache.reorder(IndexTensor({0, 2})); }), "KVCache::reorder"));
  CHECK(cache.layers[0].self_attn.batch() == 2);  // the failed reorder changed nothing
  CHECK(contains(error_of([&] { dec->make_cache(0, 4); }), "KVCache"));
}

// ---- positions with an offset: the cache's size() is the position of the next token --------

TEST_CASE("positions with an offset equal slices of the full positions (rotary, sinusoidal, learned)") {
  manual_seed(31);
  const int64_t B = 2, H = 2, T = 9, D = 6;
  nn::RotaryEmbedding rope(D);
  nn::SinusoidalPositionalEncoding sin_pe(D, 16);
  nn::LearnedPositionalEmbedding learned(16, D);
  const Tensor xr = randn({B, H, T, D}), xa = randn({B, T, D});
  const Tensor rope_full = rope->forward(xr), sin_full = sin_pe->forward(xa), learned_full = learned->forward(xa);
  for (const auto& chunks : chunkings(T)) {
    int64_t at = 0;
    for (int64_t t : chunks) {
      CAPTURE(at); CAPTURE(t);
      CHECK(allclose(rope->forward(narrow(xr, 2, at, t), at), narrow(rope_full, 2, at, t), 1e-6, 1e-6));
      CHECK(allclose(sin_pe->forward(narrow(xa, 1, at, t), at), narrow(sin_full, 1, at, t), 0, 0));
      CHECK(allclose(learned->forward(narrow(xa, 1, at, t), at), narrow(learned_full, 1, at, t), 0, 0));
      at += t;
    }
  }
  // past the table: an error naming the module and the positions
  const std::string past = error_of([&] { learned->forward(randn({1, 2, D}), 15); });
  CHECK(contains(past, "LearnedPositionalEmbedding"));
  CHECK(contains(past, "15 .. 16"));
  CHECK(contains(error_of([&] { sin_pe->forward(randn({1, 1, D}), 16); }), "SinusoidalPositionalEncoding"));
  CHECK(contains(error_of([&] { learned->forward(randn({1, 1, D}), -1); }), "LearnedPositionalEmbedding"));
}

TEST_CASE("a user module's rotary attention decoded through KVCache equals the full causal pass") {
  manual_seed(32);
  const int64_t B = 2, H = 3, T = 10, D = 4;
  nn::RotaryEmbedding rope(D);
  const Tensor q = randn({B, H, T, D}), k = randn({B, H, T, D}), v = randn({B, H, T, D});
  const Tensor full = flash_attention(rope->forward(q), rope->forward(k), v, AttentionMask().causal());
  NoGradGuard no_grad;
  KVCache cache(B, H, T, D, D);
  for (int64_t t : {4, 1, 1, 1, 1, 1, 1}) {
    const int64_t at = cache.size();  // the position of the first new token
    cache.append(rope->forward(narrow(k, 2, at, t), at), narrow(v, 2, at, t));
    const Tensor o = cache.attend(rope->forward(narrow(q, 2, at, t), at), AttentionMask().causal());
    CHECK(allclose(o, narrow(full, 2, at, t), 1e-5, 1e-5));
  }
}
