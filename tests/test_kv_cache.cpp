// test_kv_cache.cpp - nn::KVCache and incremental decoding: the cache's storage and
// bookkeeping (append, crop, reorder, memory), the flash kernel reading a prefix of it in
// place against the same keys copied out, and every error naming KVCache.
#include <string>
#include <utility>
#include <vector>

#include <heed/autograd/flash_attention.h>
#include <heed/autograd/grad_mode.h>
#include <heed/autograd/shape_ops.h>
#include <heed/autograd/reduce.h>
#include <heed/autograd/arith.h>
#include <heed/layers/kv_cache.h>
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
