// test_decoding_state.cpp - the semantics of decoding state (layers/attention/kv_cache.h):
// a copied KVCache is deep, a failed step leaves every cache as it was, a cached
// MultiheadAttention is told self- or cross-attention, and a cache filled under other
// weights is refused.
#include <string>
#include <utility>

#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/shape.h>
#include <heed/core/random.h>
#include <heed/layers/attention/kv_cache.h>
#include <heed/layers/attention/multihead_attention.h>
#include <heed/layers/transformer_decoder.h>
#include <heed/optim/sgd.h>
#include "helpers.h"

using namespace heed;
using heed::nn::AttentionMask;
using heed::nn::Attending;
using heed::nn::KVCache;
using heed::test::allclose;
using heed::test::error_of;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

nn::TransformerDecoder two_layer_decoder() {
  auto dec = nn::TransformerDecoder(nn::TransformerDecoderOptions(
      nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16), 2));
  dec->eval();
  return dec;
}

}  // namespace

TEST_CASE("KVCache: a copy is deep, appending to it leaves the original unchanged") {
  manual_seed(41);
  NoGradGuard no_grad;
  KVCache cache(1, 2, 6, 3, 3);
  cache.append(randn({1, 2, 2, 3}), randn({1, 2, 2, 3}));
  const Tensor k0 = cache.keys(), v0 = cache.values();
  const Tensor k1 = randn({1, 2, 1, 3}), v1 = randn({1, 2, 1, 3});
  KVCache branch = cache;  // what a beam-search fork writes
  KVCache assigned;
  assigned = cache;
  for (KVCache* c : {&branch, &assigned}) {
    c->crop(1);
    c->append(k1, v1);  // overwrites position 1 of the copy only
    CHECK(c->size() == 2);
    CHECK(allclose(narrow(c->keys(), 2, 1, 1), k1, 0, 0));
  }
  CHECK(cache.size() == 2);
  CHECK(allclose(cache.keys(), k0, 0, 0));
  CHECK(allclose(cache.values(), v0, 0, 0));
  CHECK(branch.key_storage().data() != cache.key_storage().data());
  const real* storage = branch.key_storage().data();
  KVCache moved = std::move(branch);  // a move takes the storage
  CHECK(moved.key_storage().data() == storage);
}

TEST_CASE("KVCache: errors name KVCache and the undefined argument") {
  NoGradGuard no_grad;
  KVCache cache(1, 1, 4, 2, 2);
  const Tensor k = zeros({1, 1, 1, 2});
  const std::string e = error_of([&] { cache.append(Tensor(), k); });
  CHECK(contains(e, "KVCache"));
  CHECK(contains(e, "k (the keys) is an undefined tensor"));
  CHECK(contains(error_of([&] { cache.append(k, Tensor()); }), "v (the values)"));
  CHECK(contains(error_of([&] { cache.append_heads(Tensor(), zeros({1, 1, 2})); }), "append_heads: k"));
  CHECK(contains(error_of([&] { cache.attend(Tensor()); }), "q (the queries)"));
  CHECK(cache.size() == 0);
}

TEST_CASE("TransformerDecoder: a step that fails in any layer leaves every cache as it was") {
  manual_seed(42);
  const int64_t B = 2, T = 4, Ts = 3, E = 8;
  const Tensor tgt = randn({B, T, E}), memory = randn({B, Ts, E});
  auto dec = two_layer_decoder();
  NoGradGuard no_grad;
  nn::TransformerDecoderCache clean = dec->make_cache(B, T), cache = dec->make_cache(B, T);
  const Tensor prompt = narrow(tgt, 1, 0, 2), next = narrow(tgt, 1, 2, 1);
  dec->forward(prompt, memory, AttentionMask().causal(), {}, &clean);
  const Tensor want = dec->forward(next, memory, AttentionMask().causal(), {}, &clean);
  // a memory_mask that does not fit: refused by layer 0's cross-attention after its
  // self-attention appended the token (and, on the first step, after the memory was cached)
  const AttentionMask bad = AttentionMask().key_padding(ones({B, Ts + 1}));
  CHECK(contains(error_of([&] { dec->forward(prompt, memory, AttentionMask().causal(), bad, &cache); }),
                 "MultiheadAttention"));
  CHECK(cache.size() == 0);
  CHECK(!cache.layers[0].cross_attn.defined());
  dec->forward(prompt, memory, AttentionMask().causal(), {}, &cache);
  CHECK(contains(error_of([&] { dec->forward(next, memory, AttentionMask().causal(), bad, &cache); }),
                 "MultiheadAttention"));
  for (const nn::DecoderLayerCache& l : cache.layers) CHECK(l.self_attn.size() == 2);
  // layer 1 overflows its own cache: layer 0 has already appended, and is put back
  nn::TransformerDecoderCache tight = dec->make_cache(B, T);
  tight.layers[1].self_attn = KVCache(B, 2, 2, 4, 4);
  dec->forward(prompt, memory, AttentionMask().causal(), {}, &tight);
  CHECK(contains(error_of([&] { dec->forward(next, memory, AttentionMask().causal(), {}, &tight); }),
                 "overflows max_len 2"));
  CHECK(tight.layers[0].self_attn.size() == 2);
  // the retry equals the step that never failed, and crop agrees with size
  CHECK(allclose(dec->forward(next, memory, AttentionMask().causal(), {}, &cache), want, 0, 0));
  CHECK(cache.size() == 3);
  cache.crop(cache.size());
  for (const nn::DecoderLayerCache& l : cache.layers) CHECK(l.self_attn.size() == 3);
}

TEST_CASE("MultiheadAttention with a cache: self- or cross-attention is said, never inferred") {
  manual_seed(43);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  const Tensor x = randn({1, 3, 8});
  NoGradGuard no_grad;
  KVCache same(1, 2, 4, 4, 4), distinct(1, 2, 4, 4, 4), unsaid(1, 2, 4, 4, 4);
  for (const auto& [from, n] : {std::pair<int64_t, int64_t>{0, 2}, {2, 1}}) {  // a prompt, then a token
    const Tensor xt = narrow(x, 1, from, n);
    const Tensor want = mha->forward(xt, xt, xt, AttentionMask().causal(), {}, false, true, &same,
                                    Attending::self).output;
    // three equal but distinct tensors: the same values, so the same answer
    const Tensor q = narrow(x, 1, from, n), k = narrow(x, 1, from, n), v = narrow(x, 1, from, n);
    CHECK(allclose(mha->forward(q, k, v, AttentionMask().causal(), {}, false, true, &distinct,
                               Attending::self).output, want, 1e-6, 1e-6));
    CHECK(distinct.size() == from + n);
  }
  const std::string e = error_of([&] { mha->forward(x, x, x, {}, {}, false, true, &unsaid); });
  CHECK(contains(e, "MultiheadAttention"));
  CHECK(contains(e, "nn::Attending::self"));
  CHECK(unsaid.size() == 0);
  CHECK(contains(error_of([&] { mha->forward(x, narrow(x, 1, 0, 2), narrow(x, 1, 0, 2), {}, {},
                                            false, true, &unsaid, Attending::self); }),
                 "same 3 new tokens"));
}

TEST_CASE("MultiheadAttention: a cache filled under other weights is refused until reset") {
  manual_seed(44);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  const Tensor x = randn({1, 2, 8}), mem = randn({1, 3, 8});
  KVCache self(1, 2, 8, 4, 4), cross;
  auto step = [&] {
    NoGradGuard no_grad;
    mha->forward(x, x, x, AttentionMask().causal(), {}, false, true, &self, Attending::self);
    mha->forward(x, mem, mem, {}, {}, false, true, &cross, Attending::cross);
  };
  step();
  // an optimizer step writes the weights in place
  for (const Tensor& p : mha->parameters()) p.set_grad(ones(p.shape()));
  optim::SGD(mha->parameters(), optim::SGDOptions(0.1)).step();
  for (KVCache* c : {&self, &cross}) {
    NoGradGuard no_grad;
    const Attending a = c == &self ? Attending::self : Attending::cross;
    const Tensor kv = c == &self ? x : mem;
    const std::string e = error_of([&] { mha->forward(x, kv, kv, {}, {}, false, true, c, a); });
    CHECK(contains(e, "KVCache"));
    CHECK(contains(e, "MultiheadAttention's projection weights changed since the cache was filled"));
    CHECK(contains(e, "reset()"));
  }
  CHECK(self.size() == 2);  // refused before anything was written
  self.reset(), cross.reset();
  step();  // refilled under the new weights
  CHECK(self.size() == 2);
  // load_state_dict copies into the same tensors: refused as well
  mha->load_state_dict(mha->state_dict());
  NoGradGuard no_grad;
  CHECK(contains(error_of([&] { mha->forward(x, x, x, {}, {}, false, true, &self, Attending::self); }),
                 "changed since the cache was filled"));
}
