// gradcheck_flash_attention.cpp - finite-difference checks (double build) of the tiled
// attention's hand-written backward, with tiles small and odd enough (2x3, 3x2, 1x1) that
// every T crosses tile boundaries, reading the heads (B, H, T, D), side by side
// (B, T, H*D) and packed (B, T, 3*H*D); and, in double, flash == composed to 1e-12.
#include <utility>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/compare.h>
#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/layers/attention/ops.h>
#include "helpers.h"

using namespace heed;
using heed::nn::AttentionMask;
using heed::test::half_left_padding;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

std::vector<AttentionMask> mask_kinds(int64_t B, int64_t Tk) {
  const Tensor pad = half_left_padding(B, Tk);
  Tensor full = gt(rand({B, 1, 1, Tk}), 0.3);  // (B, 1, 1, Tk), broadcast over heads and queries
  full.data()[0] = 1;
  return {AttentionMask(), AttentionMask().key_padding(pad), AttentionMask().causal(),
          AttentionMask().key_padding(pad).causal(), AttentionMask().mask(full).causal()};
}

const std::vector<std::pair<int64_t, int64_t>> kLengths = {{1, 1}, {3, 3}, {7, 7}, {3, 7}, {7, 3}};
// tile sizes, each with both backward schedules
std::vector<FlashOptions> options() {
  std::vector<FlashOptions> all;
  for (auto [br, bc] : {std::pair<int64_t, int64_t>{2, 3}, {3, 2}, {1, 1}, {128, 64}})
    for (FlashBackward b : {FlashBackward::by_head, FlashBackward::by_blocks})
      all.push_back(FlashOptions().rows(br).cols(bc).backward(b));
  return all;
}

}  // namespace

TEST_CASE("gradcheck flash attention: T in {1, 3, 7}, Tq != Tk, masks, odd tiles") {
  manual_seed(21);
  for (auto [Tq, Tk] : kLengths)
    for (const AttentionMask& m : mask_kinds(2, Tk))
      for (const FlashOptions& opt : options()) {
        CAPTURE(Tq); CAPTURE(Tk); CAPTURE(m.is_causal()); CAPTURE(m.key_padding().defined());
        CAPTURE(m.mask().defined()); CAPTURE(opt.rows()); CAPTURE(opt.cols());
        CAPTURE(int(opt.backward()));
        Tensor q = param({2, 2, Tq, 3}), k = param({2, 2, Tk, 3}), v = param({2, 2, Tk, 4});
        check_grad([&](const V& x) { return flash_attention(x[0], x[1], x[2], m, {}, opt); },
                   {q, k, v});
      }
}

TEST_CASE("gradcheck flash attention: 3-D inputs, scale override, fully masked rows") {
  manual_seed(22);
  Tensor q = param({2, 5, 3}), k = param({2, 4, 3}), v = param({2, 4, 2});
  // causal with Tq > Tk: query 0 of every batch sees nothing; batch 1 sees no key at all
  Tensor pad = ones({2, 4});
  for (int64_t j = 0; j < 4; ++j) pad.data()[4 + j] = 0;
  const AttentionMask m = AttentionMask().causal().key_padding(pad);
  check_grad([&](const V& x) { return flash_attention(x[0], x[1], x[2], m, 0.7,
                                                      FlashOptions().rows(2).cols(3)); },
             {q, k, v});
}

TEST_CASE("gradcheck flash attention reading heads in place: side by side and packed") {
  manual_seed(24);
  const int64_t H = 2;
  for (auto [Tq, Tk] : kLengths)
    for (const AttentionMask& m : mask_kinds(2, Tk))
      for (const FlashOptions& opt : {FlashOptions().rows(2).cols(3).backward(FlashBackward::by_head),
                                      FlashOptions().rows(3).cols(2).backward(FlashBackward::by_blocks)}) {
        CAPTURE(Tq); CAPTURE(Tk); CAPTURE(m.is_causal()); CAPTURE(m.key_padding().defined());
        CAPTURE(m.mask().defined()); CAPTURE(int(opt.backward()));
        // q (B, Tq, H*3), k (B, Tk, H*3), v (B, Tk, H*2): heads at row strides 6 and 4
        Tensor q = param({2, Tq, H * 3}), k = param({2, Tk, H * 3}), v = param({2, Tk, H * 2});
        check_grad([&](const V& x) { return flash_attention_heads(x[0], x[1], x[2], H, m, {}, opt); },
                   {q, k, v});
        // q (B, Tq, H*3), kv (B, Tk, 2 * H*3): K and V and their gradients at row stride 12
        Tensor kv = param({2, Tk, 2 * H * 3}), q3 = param({2, Tq, H * 3});
        check_grad([&](const V& x) { return flash_attention_packed(x[0], x[1], H, m, {}, opt); },
                   {q3, kv});
        if (Tq != Tk) continue;
        // qkv (B, T, 3 * H * 3): Q, K, V and their gradients at row stride 18
        Tensor qkv = param({2, Tq, 3 * H * 3});
        check_grad([&](const V& x) { return flash_attention_packed(x[0], H, m, {}, opt); }, {qkv});
      }
}

TEST_CASE("gradcheck flash attention over a prefix of preallocated keys (a KV cache)") {
  manual_seed(25);
  const int64_t H = 2, L = 9;  // storage for 9 keys, the first Tk of them read
  for (auto [Tq, Tk] : kLengths)
    for (const AttentionMask& m : mask_kinds(2, Tk))
      for (const FlashOptions& opt : {FlashOptions().rows(2).cols(3).backward(FlashBackward::by_head),
                                      FlashOptions().rows(3).cols(2).backward(FlashBackward::by_blocks)}) {
        CAPTURE(Tq); CAPTURE(Tk); CAPTURE(m.is_causal()); CAPTURE(m.key_padding().defined());
        // k (B, H, L, 3), v (B, H, L, 2): heads L*3 and L*2 apart, rows Tk .. L never read
        Tensor k = param({2, H, L, 3}), v = param({2, H, L, 2});
        Tensor q = param({2, H, Tq, 3}), qs = param({2, Tq, H * 3});
        check_grad([&](const V& x) { return flash_attention_prefix(x[0], x[1], x[2], Tk, m, {}, opt); },
                   {q, k, v});
        check_grad([&](const V& x) { return flash_attention_heads_prefix(x[0], x[1], x[2], Tk, m, {}, opt); },
                   {qs, k, v});
      }
}

TEST_CASE("flash attention equals composed attention in double, to 1e-12") {
  manual_seed(23);
  for (auto [Tq, Tk] : kLengths)
    for (const AttentionMask& m : mask_kinds(2, Tk)) {
      Tensor q = param({2, 2, Tq, 3}), k = param({2, 2, Tk, 3}), v = param({2, 2, Tk, 4});
      Tensor w = randn({2, 2, Tq, 4});
      Tensor f = flash_attention(q, k, v, m, {}, FlashOptions().rows(2).cols(3));
      sum(f * w).backward();
      const V fg = {q.grad(), k.grad(), v.grad()};
      for (const Tensor& t : {q, k, v}) t.set_grad(Tensor());
      Tensor r = flash_attention_composed(q, k, v, m);
      sum(r * w).backward();
      CHECK(test::allclose(f, r, 1e-12, 1e-12));
      CHECK(test::allclose(fg[0], q.grad(), 1e-12, 1e-12));
      CHECK(test::allclose(fg[1], k.grad(), 1e-12, 1e-12));
      CHECK(test::allclose(fg[2], v.grad(), 1e-12, 1e-12));
    }
}
