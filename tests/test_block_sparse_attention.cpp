// test_block_sparse_attention.cpp - block layouts (autograd/ops/attention/block_layout.h) stand for the
// patterns they are built from, and block-sparse attention (autograd/ops/attention/block_sparse_attention.h)
// equals the dense masked reference in outputs and gradients for every generator, causal or
// not, with key padding, Tq != Tk, partial blocks and blocks that do not divide T; a dropped
// block is never visited (tiles counted) nor read (NaN keys in it change nothing).
#include <cmath>
#include <vector>

#include <heed/core/allocator.h>
#include <heed/core/cpu.h>
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attend.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/attention/block_layout.h>
#include <heed/autograd/ops/attention/block_sparse_attention.h>
#include <heed/autograd/ops/compare.h>
#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/attention/sparse_attention.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/attention/multihead_attention.h>
#include <heed/layers/attention/sparse_attention.h>
#include "helpers.h"

using namespace heed;
using heed::nn::AttentionMask;
using heed::test::half_left_padding;
using heed::nn::BlockLayout;
using V = std::vector<Tensor>;

namespace {

// Block-sparse == composed (outputs, dq, dk, dv) for random q (B, H, Tq, D) and both
// backward schedules; 3-D inputs (no head dim) when H == 0.
void compare(const BlockLayout& L, const AttentionMask& m, int64_t B = 2, int64_t H = 3) {
  const int64_t Tq = L.q_len(), Tk = L.k_len(), D = 8, Dv = 5;
  CAPTURE(Tq); CAPTURE(Tk); CAPTURE(L.block()); CAPTURE(L.heads()); CAPTURE(m.is_causal());
  CAPTURE(m.key_padding().defined()); CAPTURE(H);
  auto shape = [&](int64_t T, int64_t d) { return H ? Shape{B, H, T, d} : Shape{B, T, d}; };
  const V in = {randn(shape(Tq, D)), randn(shape(Tk, D)), randn(shape(Tk, Dv))};
  for (FlashBackward s : {FlashBackward::by_head, FlashBackward::by_blocks}) {
    CAPTURE(int(s));
    test::check_fused_matches_composed(
        [&](const V& x) { return block_sparse_attention(x[0], x[1], x[2], L, m, {}, s); },
        [&](const V& x) { return block_sparse_attention_composed(x[0], x[1], x[2], L, m); }, in,
        2e-4, 2e-5);
  }
}

// The pattern a generator stands for, token by token, for a (T, T) layout.
template <class F>
Tensor token_pattern(int64_t T, const F& visible) {
  Tensor p = zeros({T, T});
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) p.data()[i * T + j] = visible(i, j) ? 1 : 0;
  return p;
}

bool same(const Tensor& a, const Tensor& b) { return test::allclose(a, b, 0, 0); }

}  // namespace

TEST_CASE("block layout: from_pattern keeps a block when any entry is 1, partial blocks keep their mask") {
  manual_seed(3);
  for (auto [Tq, Tk, b] : std::vector<std::array<int64_t, 3>>{{13, 13, 4}, {9, 17, 5}, {16, 8, 4}, {5, 5, 7}}) {
    CAPTURE(Tq); CAPTURE(Tk); CAPTURE(b);
    Tensor p = gt(rand({2, Tq, Tk}), 0.93);  // sparse: some blocks empty, most partial
    const BlockLayout L = BlockLayout::from_pattern(p, b);
    CHECK(L.heads() == 2);
    CHECK(L.q_blocks() == (Tq + b - 1) / b);
    CHECK(L.k_blocks() == (Tk + b - 1) / b);
    CHECK(same(L.pattern(), p));  // kept blocks with their masks are exactly the pattern
    int64_t kept = 0, dropped = 0;
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t I = 0; I < L.q_blocks(); ++I)
        for (int64_t J = 0; J < L.k_blocks(); ++J) {
          bool any = false, all = true;
          for (int64_t i = I * b; i < std::min(Tq, I * b + b); ++i)
            for (int64_t j = J * b; j < std::min(Tk, J * b + b); ++j) {
              const bool one = p.data()[(h * Tq + i) * Tk + j] != 0;
              any = any || one, all = all && one;
            }
          CHECK(L.kept(h, I, J) == any);
          CHECK((L.block_mask(h, I, J) != nullptr) == (any && !all));
          kept += any, dropped += !any;
        }
    CHECK(L.kept_blocks() == kept);
    if (b < Tq) CHECK(dropped > 0);
    // the column lists hold the same blocks
    int64_t by_column = 0;
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t J = 0; J < L.k_blocks(); ++J)
        for (int64_t I : L.query_blocks(h, J)) by_column += L.kept(h, I, J);
    CHECK(by_column == kept);
  }
  CHECK(test::error_of([] { BlockLayout::from_pattern(full({4, 4}, 0.5), 2); }).find("0 and 1") !=
        std::string::npos);
  CHECK(test::error_of([] { BlockLayout::from_pattern(ones({4, 4}), 0); }).find("block must be >= 1") !=
        std::string::npos);
}

TEST_CASE("block layout: each generator's pattern, token by token; density") {
  const int64_t T = 37, b = 4;  // b does not divide T
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    auto rule = [&](auto keep) {
      return [=](int64_t i, int64_t j) { return keep(i / b, j / b) && (!causal || j <= i); };
    };
    CHECK(same(nn::strided_layout(T, b, 2, 3, causal).pattern(),
               token_pattern(T, rule([&](int64_t I, int64_t J) {
                 const int64_t a = std::abs(I - J);
                 return (!causal || J <= I) && (a <= 2 || a % 3 == 0);
               }))));
    CHECK(same(nn::fixed_layout(T, b, 3, 1, causal).pattern(),
               token_pattern(T, rule([&](int64_t I, int64_t J) {
                 return (!causal || J <= I) && (J / 3 == I / 3 || J % 3 == 2);
               }))));
    // the sliding window's layout stands for heed's token-level window pattern exactly
    CHECK(same(nn::sliding_window_layout(T, b, 5, causal).pattern(),
               nn::sliding_window_pattern(T, 5, causal)));
    const std::vector<int64_t> globals = {0, 17};
    CHECK(same(nn::longformer_layout(T, b, 3, globals, causal).pattern(),
               token_pattern(T, [&](int64_t i, int64_t j) {
                 const bool g = i == 0 || i == 17 || j == 0 || j == 17;
                 return (!causal || j <= i) && (std::abs(i - j) <= 3 || g);
               })));
    manual_seed(5);
    const BlockLayout bb = nn::bigbird_layout(T, b, 1, 1, 2, causal, 2);
    manual_seed(5);
    CHECK(same(nn::bigbird_layout(T, b, 1, 1, 2, causal, 2).pattern(), bb.pattern()));  // seeded
    const int64_t n = bb.q_blocks();
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t I = 0; I < n; ++I) {
        int64_t random = 0, free = 0;
        for (int64_t J = 0; J < n; ++J) {
          const bool fixed = std::abs(I - J) <= 1 || I < 1 || J < 1;
          if (causal && J > I) {
            CHECK(!bb.kept(h, I, J));
            continue;
          }
          if (fixed) CHECK(bb.kept(h, I, J));
          else free += 1, random += bb.kept(h, I, J);
        }
        if (I >= 1) CHECK(random == std::min<int64_t>(2, free));  // r random blocks per row
      }
  }
  // density: kept area over Tq Tk; a full layout is 1, a T = 16384 strided one about 6%
  CHECK(BlockLayout::from_pattern(ones({10, 10}), 3).density() == doctest::Approx(1));
  const BlockLayout s = nn::strided_layout(16384, 64, 7, 16);
  CHECK(s.density() == doctest::Approx(double(s.kept_blocks()) / (256.0 * 256.0)));
  CHECK(s.density() > 0.05);
  CHECK(s.density() < 0.07);
  CHECK(s.partial_blocks() == 256);  // the causal diagonal
}

TEST_CASE("block-sparse attention == the dense masked reference: every generator, masks, odd blocks") {
  manual_seed(7);
  const int64_t T = 23;
  for (int64_t b : {4, 5, 8, 32}) {  // 5 and 8 do not divide 23; 32 is one block
    for (bool causal : {false, true}) {
      const std::vector<BlockLayout> layouts = {
          nn::strided_layout(T, b, 1, 2, causal), nn::fixed_layout(T, b, 2, 1, causal),
          nn::sliding_window_layout(T, b, 3, causal), nn::longformer_layout(T, b, 2, {0, 11}, causal),
          nn::bigbird_layout(T, b, 1, 1, 1, causal), nn::bigbird_layout(T, b, 0, 0, 1, causal, 3)};
      for (const BlockLayout& L : layouts)
        for (const AttentionMask& m :
             {AttentionMask(), AttentionMask().causal(), AttentionMask().key_padding(half_left_padding(2, T)),
              AttentionMask().key_padding(half_left_padding(2, T)).causal()})
          compare(L, m);
    }
  }
}

TEST_CASE("block-sparse attention: Tq != Tk, per-head patterns, 3-D inputs, a full mask") {
  manual_seed(8);
  for (auto [Tq, Tk] : std::vector<std::pair<int64_t, int64_t>>{{9, 21}, {21, 9}, {1, 13}, {13, 1}})
    for (int64_t b : {3, 4}) {
      const BlockLayout shared = BlockLayout::from_pattern(gt(rand({Tq, Tk}), 0.7), b);
      const BlockLayout per_head = BlockLayout::from_pattern(gt(rand({3, Tq, Tk}), 0.7), b);
      for (const AttentionMask& m :
           {AttentionMask(), AttentionMask().causal(), AttentionMask().key_padding(half_left_padding(2, Tk)).causal()}) {
        compare(shared, m);
        compare(per_head, m);
        compare(shared, m, 2, 0);
      }
      Tensor full = gt(rand({2, 1, Tq, Tk}), 0.2);
      compare(shared, AttentionMask().mask(full));
    }
}

TEST_CASE("block-sparse attention: rows with no visible key give zeros; errors name the op") {
  manual_seed(9);
  // every key of batch 1 is padding: its outputs and gradients are 0, not NaN
  const BlockLayout L = nn::sliding_window_layout(12, 4, 2, false);
  Tensor pad = ones({2, 12});
  for (int64_t j = 0; j < 12; ++j) pad.data()[12 + j] = 0;
  Tensor q = test::param({2, 2, 12, 4}), k = test::param({2, 2, 12, 4}), v = test::param({2, 2, 12, 4});
  Tensor o = block_sparse_attention(q, k, v, L, AttentionMask().key_padding(pad));
  sum(o).backward();
  for (int64_t e = o.numel() / 2; e < o.numel(); ++e) CHECK(o.data()[e] == 0);
  for (const Tensor& g : {q.grad(), k.grad(), v.grad()})
    for (int64_t e = 0; e < g.numel(); ++e) CHECK(std::isfinite(g.data()[e]));
  CHECK(test::error_of([&] { block_sparse_attention(q, k, v, nn::strided_layout(11, 4, 1, 2)); })
            .find("block_sparse_attention") != std::string::npos);
  CHECK(test::error_of([&] { block_sparse_attention(q, k, v, BlockLayout()); }).find("undefined") !=
        std::string::npos);
  const BlockLayout three_heads = nn::bigbird_layout(12, 4, 1, 0, 1, false, 3);
  CHECK(test::error_of([&] { block_sparse_attention(q, k, v, three_heads); }).find("3 head(s)") !=
        std::string::npos);
}

TEST_CASE("block-sparse attention visits only kept blocks and never reads a dropped one") {
  manual_seed(10);
  const int64_t B = 2, H = 3, T = 40, b = 8;  // 5 x 5 blocks
  // key block 3 (keys 24..31) is dropped for every query block; the others keep a few blocks
  Tensor p = zeros({T, T});
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j)
      if ((i / b + j / b) % 2 == 0 && j / b != 3) p.data()[i * T + j] = 1;
  const BlockLayout L = BlockLayout::from_pattern(p, b);
  REQUIRE(L.kept_blocks() == 11);
  Tensor q = test::param({B, H, T, 8}), k = test::param({B, H, T, 8}), v = test::param({B, H, T, 8});
  for (FlashBackward s : {FlashBackward::by_head, FlashBackward::by_blocks}) {
    CAPTURE(int(s));
    L.reset_tiles_visited();
    Tensor o = block_sparse_attention(q, k, v, L, {}, {}, s);
    CHECK(L.tiles_visited() == B * H * 11);  // forward: each kept tile once
    L.reset_tiles_visited();
    sum(o).backward();
    // backward: by_head once per tile, by_blocks twice (pass A for dQ, pass B for dK, dV)
    CHECK(L.tiles_visited() == B * H * 11 * (s == FlashBackward::by_head ? 1 : 2));
    q.set_grad(Tensor()), k.set_grad(Tensor()), v.set_grad(Tensor());
  }
  // NaN keys and values in the dropped block: nothing reads them
  Tensor k2 = k.detach().clone(), v2 = v.detach().clone();
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t j = 24; j < 32; ++j)
      for (int64_t d = 0; d < 8; ++d)
        k2.data()[(bh * T + j) * 8 + d] = NAN, v2.data()[(bh * T + j) * 8 + d] = NAN;
  CHECK(same(block_sparse_attention(q, k2, v2, L), block_sparse_attention(q, k, v, L)));
}

TEST_CASE("sparse_attention, nn::SparseAttention and MultiheadAttention run the kernel given a layout") {
  manual_seed(11);
  const int64_t T = 19, b = 4;
  const BlockLayout L = nn::longformer_layout(T, b, 2, {0, 9});
  const AttentionMask pad = AttentionMask().key_padding(half_left_padding(2, T));
  // sparse_attention: the layout form == the dense form with its pattern; no weights
  const V in = {randn({2, 2, T, 8}), randn({2, 2, T, 8}), randn({2, 2, T, 6})};
  test::check_fused_matches_composed(
      [&](const V& x) {
        nn::Attended a = nn::sparse_attention(x[0], x[1], x[2], L, pad);
        CHECK(!a.weights.defined());
        return a.context;
      },
      [&](const V& x) { return nn::sparse_attention(x[0], x[1], x[2], L.pattern(), pad).context; },
      in, 2e-4, 2e-5);
  CHECK(nn::sparse_attention(in[0], in[1], in[2], L, pad, {}, 0.5, true).weights.defined());  // dropout: dense
  // the module: a layout and its pattern give the same context
  nn::SparseAttention by_layout(nn::SparseAttentionOptions(L).causal(true));
  nn::SparseAttention by_pattern(nn::SparseAttentionOptions(L.pattern()).causal(true));
  CHECK(test::allclose(by_layout->forward(in[0], in[1], in[2], pad).context,
                       by_pattern->forward(in[0], in[1], in[2], pad).context, 2e-4, 2e-5));
  CHECK(by_layout->repr().find("SparseAttention(layout=(5, 5), block=4, density=") == 0);
  // MultiheadAttention: the fast path (block-sparse kernel) == the composed path (dense scores
  // masked with the pattern), output and parameter gradients, for self- and cross-attention
  for (const BlockLayout& layout : {L, nn::bigbird_layout(T, b, 1, 1, 1, false, 2)}) {
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).block_layout(layout));
    const Tensor x = randn({2, T, 8}), mem = randn({2, T, 8});
    for (bool self : {true, false}) {
      CAPTURE(self); CAPTURE(layout.heads());
      auto run = [&](bool need_weights) {
        mha->zero_grad();
        Tensor y = mha->forward(x, self ? x : mem, self ? x : mem, pad, {}, need_weights).output;
        sum(y * y).backward();
        return std::pair<Tensor, Tensor>{y.detach(), mha->in_proj_weight.grad().clone()};
      };
      const auto [fast, fast_grad] = run(false);
      const auto [composed, composed_grad] = run(true);
      CHECK(test::allclose(fast, composed, 2e-4, 2e-5));
      CHECK(test::allclose(fast_grad, composed_grad, 2e-4, 2e-5));
    }
  }
  nn::MultiheadAttention wrong(nn::MultiheadAttentionOptions(8, 2).block_layout(nn::strided_layout(7, 4, 1, 2)));
  const Tensor x = randn({2, T, 8});
  CHECK(test::error_of([&] { wrong->forward(x, x, x, {}, {}, false); }).find("MultiheadAttention") !=
        std::string::npos);
}

TEST_CASE("block-sparse attention's working memory is the tiles', not the scores'") {
  manual_seed(12);
  const int64_t B = 1, H = 2, T = 4096, D = 32;  // dense scores and weights: 128 MiB each
  const BlockLayout L = nn::strided_layout(T, 64, 7, 16);
  Tensor q = test::param({B, H, T, D}), k = test::param({B, H, T, D}), v = test::param({B, H, T, D});
  const Tensor dO = randn({B, H, T, D});
  const int64_t one = int64_t(alloc::size_class(q.numel() * sizeof(real)));
  alloc::reset_peak_bytes();
  const int64_t before = alloc::stats().live_bytes;
  block_sparse_attention(q, k, v, L, AttentionMask().causal()).backward(dO);
  // beyond O and the three gradients: L (B, H, T), per thread the 64 x 64 tiles and the packed
  // key block, autograd's copy of one gradient into .grad
  const int64_t working = alloc::stats().peak_bytes - before - 4 * one;
  MESSAGE("working memory beyond O and the gradients: ", working, " B");
  CHECK(working < 2 * one);
}
