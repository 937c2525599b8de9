// gradcheck_block_sparse_attention.cpp - finite-difference checks (double build) of
// block-sparse attention's backward (autograd/ops/attention/block_sparse_attention.h) on small shapes:
// each generator, per-head layouts, partial blocks, blocks that do not divide T, Tq != Tk,
// key padding and causal, both backward schedules; and block-sparse == composed to 1e-12.
#include <heed/core/random.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/attention/block_layout.h>
#include <heed/autograd/ops/attention/block_sparse_attention.h>
#include <heed/autograd/ops/compare.h>
#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/layers/attention/ops.h>
#include "helpers.h"

using namespace heed;
using heed::nn::AttentionMask;
using heed::nn::BlockLayout;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

void check(const BlockLayout& L, const AttentionMask& m) {
  CAPTURE(L.q_len()); CAPTURE(L.k_len()); CAPTURE(L.block()); CAPTURE(L.heads());
  CAPTURE(m.is_causal()); CAPTURE(m.key_padding().defined());
  Tensor q = param({2, 2, L.q_len(), 3}), k = param({2, 2, L.k_len(), 3}), v = param({2, 2, L.k_len(), 4});
  for (FlashBackward s : {FlashBackward::by_head, FlashBackward::by_blocks}) {
    CAPTURE(int(s));
    check_grad([&](const V& x) { return block_sparse_attention(x[0], x[1], x[2], L, m, {}, s); },
               {q, k, v});
  }
  test::check_fused_matches_composed(
      [&](const V& x) { return block_sparse_attention(x[0], x[1], x[2], L, m); },
      [&](const V& x) { return block_sparse_attention_composed(x[0], x[1], x[2], L, m); },
      {q, k, v}, 1e-12, 1e-12);
}

}  // namespace

TEST_CASE("gradcheck block-sparse attention: generators, per-head, partial and odd blocks") {
  manual_seed(31);
  const int64_t T = 7;
  const Tensor pad = test::half_left_padding(2, T);
  for (int64_t b : {2, 3}) {
    for (bool causal : {false, true}) {
      for (const BlockLayout& L :
           {nn::strided_layout(T, b, 0, 2, causal), nn::fixed_layout(T, b, 2, 1, causal),
            nn::sliding_window_layout(T, b, 1, causal), nn::longformer_layout(T, b, 1, {3}, causal),
            nn::bigbird_layout(T, b, 0, 1, 1, causal, 2)})
        for (const AttentionMask& m : {AttentionMask().causal(causal), AttentionMask().key_padding(pad).causal(causal)})
          check(L, m);
    }
    for (auto [Tq, Tk] : {std::pair<int64_t, int64_t>{3, 7}, {7, 3}}) {
      const BlockLayout L = BlockLayout::from_pattern(gt(rand({2, Tq, Tk}), 0.5), b);
      check(L, AttentionMask());
      check(L, AttentionMask().causal());
    }
  }
}
