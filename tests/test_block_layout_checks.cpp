// test_block_layout_checks.cpp - BlockLayout refuses what it cannot answer: an undefined
// layout, an index outside the grid, a size it cannot hold (autograd/ops/attention/block_layout.h).
#include <cstdint>
#include <limits>
#include <string>

#include <heed/autograd/ops/attention/block_layout.h>
#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/layers/attention/multihead_attention.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/core/random.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;

namespace {
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
constexpr int64_t kHuge = std::numeric_limits<int64_t>::max();
}  // namespace

TEST_CASE("BlockLayout: every accessor of an undefined layout names BlockLayout") {
  const BlockLayout none;
  for (const std::string& e :
       {error_of([&] { none.block(); }), error_of([&] { none.density(); }),
        error_of([&] { none.pattern(); }), error_of([&] { none.key_blocks(0, 0); }),
        error_of([&] { none.kept_blocks(); }), error_of([&] { none.partial_blocks(); }),
        error_of([&] { none.kept(0, 0, 0); }), error_of([&] { none.tiles_visited(); })}) {
    CHECK(contains(e, "BlockLayout"));
    CHECK(contains(e, "undefined layout"));
  }
}

TEST_CASE("BlockLayout: indices are checked, negative ones included") {
  const BlockLayout L = strided_layout(16, 4, 1, 2);  // 4 x 4 blocks, shared
  CHECK(contains(error_of([&] { L.kept(0, -1, 0); }), "block I = -1 is outside [0, 4)"));
  CHECK(contains(error_of([&] { L.key_blocks(0, kHuge); }), "key_blocks"));
  CHECK(contains(error_of([&] { L.query_blocks(0, 4); }), "block J = 4"));
  CHECK(contains(error_of([&] { L.block_mask(0, 0, -1); }), "block_mask"));
  CHECK(contains(error_of([&] { L.kept(-1, 0, 0); }), "head -1"));
  CHECK(L.kept(7, 0, 0));  // a shared layout answers for any head
  const BlockLayout per_head = bigbird_layout(16, 4, 1, 1, 1, false, 2);
  CHECK(contains(error_of([&] { per_head.key_blocks(2, 0); }), "head 2 is outside [0, 2)"));
}

TEST_CASE("BlockLayout: sizes it cannot hold are a heed::Error, before any allocation") {
  CHECK(contains(error_of([&] { strided_layout(64, int64_t(1) << 62, 1, 1); }), "block * block bytes"));
  CHECK(contains(error_of([&] { strided_layout(kHuge, 64, 1, 1); }), "strided_layout"));
  CHECK(contains(error_of([&] { fixed_layout(kHuge, 1, 2, 1); }), "blocks: use a larger block"));
  CHECK(contains(error_of([&] { sliding_window_layout(kHuge, kHuge, 1); }), "sliding_window_layout"));
  CHECK(contains(error_of([&] { longformer_layout(kHuge, 64, 1, {}); }), "longformer_layout"));
  CHECK(contains(error_of([&] { bigbird_layout(kHuge, 64, 1, 1, 1); }), "bigbird_layout"));
  CHECK(contains(error_of([&] { bigbird_layout(1 << 20, 1, 1, 1, 1, false, 8); }), "bigbird_layout"));
  CHECK(contains(error_of([&] { BlockLayout::from_pattern(ones({4, 4}), int64_t(1) << 40); }),
                 "BlockLayout::from_pattern"));
}

TEST_CASE("MultiheadAttention: a block layout with a KV cache names the cache and the layout") {
  nn::MultiheadAttention mha(
      nn::MultiheadAttentionOptions(8, 2).block_layout(strided_layout(4, 2, 1, 1)));
  const Tensor x = randn({1, 1, 8});
  NoGradGuard no_grad;
  nn::KVCache cache(1, 2, 8, 4, 4);
  const std::string e = error_of([&] {
    mha->forward(x, x, x, nn::AttentionMask().causal(), {}, false, true, &cache, nn::Attending::self);
  });
  CHECK(contains(e, "block layout"));
  CHECK(contains(e, "KVCache"));
  CHECK(cache.size() == 0);
}

TEST_CASE("flash attention: tile sizes past the sequence are clamped, never allocated") {
  manual_seed(45);
  const Tensor q = randn({1, 2, 5, 4}), k = randn({1, 2, 6, 4}), v = randn({1, 2, 6, 4});
  const Tensor want = flash_attention(q, k, v, nn::AttentionMask().causal());
  const FlashOptions huge = FlashOptions().rows(kHuge / 2).cols(kHuge / 2);
  CHECK(test::allclose(flash_attention(q, k, v, nn::AttentionMask().causal(), {}, huge), want, 0, 0));
}
