// test_nan_propagation.cpp - NaN and inf in q, k, v or the scale reach the same outputs and
// gradients on every attention path as on the composed one (softmax(mask(scale q k^T)) v
// from matmul, masked_fill and softmax), whatever the tile sizes and backward schedule;
// and with head dim D = 0 every path gives PyTorch's answer, the mean of the visible values.
//
// The composed path's NaN pattern is PyTorch's: for q, k, v below, torch 1.13's
//   torch.softmax((q @ k.transpose(-2, -1) * s).masked_fill(~visible, -inf), -1) @ v
// (and its autograd) is NaN exactly where heed's composed path is, except in rows with no
// visible key, which heed defines as 0 (tests/test_stability.cpp) and PyTorch leaves NaN.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/attention/chunked_attention.h>
#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/autograd/ops/attention/linear_attention.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/attention/scaled_dot_product.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/attention/sliding_window_attention.h>
#include <heed/autograd/ops/attention/sparse_attention.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/attention/multihead_attention.h>
#include "helpers.h"

using namespace heed;
using heed::nn::AttentionMask;

namespace {

constexpr real kNaN = std::numeric_limits<real>::quiet_NaN();
constexpr real kInf = std::numeric_limits<real>::infinity();

// How a path's NaNs must relate to the composed reference's.
//   exact      NaN exactly where the reference is NaN
//   dependent  NaN only where the reference is, and in every element that depends on the
//              bad input; the reference is also NaN where a hidden pair's 0 * NaN reaches
//              it (banded and linear attention never form those products), so there the
//              path may be finite, and must then agree with reference(bad input made finite).
//              For a NaN input only: an inf may change elements finitely (a score of -inf
//              is a weight of 0), so those paths are checked with NaN inputs.
enum class Nan { exact, dependent };

// Same shape; element by element both NaN, both the same infinity, or both finite and
// within rtol = 1e-4 of each other (atol 1e-5 times the tensor's scale). Names the first
// element that differs. With Nan::dependent, `clean` is the reference on the inputs with the
// bad element made finite, where it did not depend on it.
void same(const Tensor& a, const Tensor& b, const std::string& what, Nan rule = Nan::exact,
          const Tensor& clean = Tensor()) {
  CAPTURE(what);
  REQUIRE(a.shape() == b.shape());
  double top = 1;
  for (int64_t i = 0; i < b.numel(); ++i)
    if (std::isfinite(b.data()[i])) top = std::max(top, double(std::fabs(b.data()[i])));
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.data()[i], y = b.data()[i];
    CAPTURE(i); CAPTURE(x); CAPTURE(y);
    if (rule == Nan::dependent && std::isnan(y) && !std::isnan(x)) y = clean.data()[i];
    if (std::isnan(x) || std::isnan(y)) {
      REQUIRE(std::isnan(x) == std::isnan(y));
    } else if (std::isinf(x) || std::isinf(y)) {
      REQUIRE(x == y);
    } else {
      REQUIRE(std::fabs(x - y) <= 1e-5 * top + 1e-4 * std::fabs(y));
    }
  }
}

struct Run {
  Tensor out, dq, dk, dv;
};

using Attention = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;

// out = attention(q, k, v), then backward of sum(out * w) (w finite).
Run run(const Attention& attention, const Tensor& q0, const Tensor& k0, const Tensor& v0,
        const Tensor& w) {
  Tensor q = q0.detach().clone().requires_grad_(), k = k0.detach().clone().requires_grad_();
  Tensor v = v0.detach().clone().requires_grad_();
  Tensor o = attention(q, k, v);
  sum(o * w).backward();
  return {o.detach(), q.grad(), k.grad(), v.grad()};
}

void same(const Run& a, const Run& b, const std::string& what, Nan rule = Nan::exact,
          const Run& clean = Run()) {
  same(a.out, b.out, what + ": output", rule, clean.out);
  same(a.dq, b.dq, what + ": dq", rule, clean.dq);
  same(a.dk, b.dk, what + ": dk", rule, clean.dk);
  same(a.dv, b.dv, what + ": dv", rule, clean.dv);
}

// One bad element placed in q, k or v, or a bad scale.
struct Poison {
  std::string name;
  int which;  // 0 q, 1 k, 2 v, 3 the scale
  int64_t row, col;
  real value;
};

std::vector<Poison> poisons(int64_t T) {
  return {{"NaN in q", 0, T / 2, 1, kNaN},   {"NaN in k", 1, T / 3, 0, kNaN},
          {"NaN in v", 2, T - 2, 1, kNaN},    {"inf in k", 1, 1, 2, kInf},
          {"-inf in q", 0, 0, 0, -kInf},      {"inf in v", 2, T / 2, 0, kInf},
          {"NaN in the last k", 1, T - 1, 0, kNaN}, {"NaN in the first v", 2, 0, 0, kNaN},
          {"NaN scale", 3, 0, 0, kNaN},       {"inf scale", 3, 0, 0, kInf}};
}

// q (B, H, T, D), k, v (B, H, T, Dv) with p's element, in head (B-1, H-1), set.
struct Inputs {
  Tensor q, k, v, w;
  std::optional<double> scale;
  Tensor cq, ck, cv;  // q, k, v before the bad element was set
};

Inputs inputs(int64_t B, int64_t H, int64_t T, int64_t D, int64_t Dv, const Poison& p) {
  Inputs in{test::param({B, H, T, D}), test::param({B, H, T, D}), test::param({B, H, T, Dv}),
            randn({B, H, T, Dv}), {}, {}, {}, {}};
  in.cq = in.q.clone(), in.ck = in.k.clone(), in.cv = in.v.clone();
  if (p.which == 3) {
    in.scale = p.value;
    return in;
  }
  Tensor& t = p.which == 0 ? in.q : p.which == 1 ? in.k : in.v;
  const int64_t width = t.size(3);
  t.data()[((B * H - 1) * T + p.row) * width + p.col] = p.value;
  return in;
}

// Padding (B, T): batch 0 sees every key, batch 1 hides its first T/3 keys, so with causal
// its first queries see none.
Tensor left_padding(int64_t B, int64_t T) {
  Tensor pad = ones({B, T});
  for (int64_t j = 0; j < T / 3; ++j) pad.data()[(B - 1) * T + j] = 0;
  return pad;
}

std::vector<std::pair<std::string, AttentionMask>> masks(int64_t B, int64_t T) {
  const Tensor pad = left_padding(B, T);
  return {{"no mask", AttentionMask()},
          {"causal", AttentionMask().causal()},
          {"padding", AttentionMask().key_padding(pad)},
          {"causal + padding", AttentionMask().key_padding(pad).causal()}};
}

Attention composed(const AttentionMask& m, std::optional<double> s) {
  return [m, s](const Tensor& q, const Tensor& k, const Tensor& v) {
    return flash_attention_composed(q, k, v, m, s);
  };
}

// (B, H, T, D) -> (B, T, H*D) and back
Tensor merge(const Tensor& x) {
  return x.permute({0, 2, 1, 3}).contiguous().reshape({x.size(0), x.size(2), x.size(1) * x.size(3)});
}
Tensor split_heads(const Tensor& x, int64_t H) {
  return x.reshape({x.size(0), x.size(1), H, x.size(2) / H}).permute({0, 2, 1, 3});
}

}  // namespace

TEST_CASE("NaN and inf propagate through flash attention as through the composed path") {
  manual_seed(31);
  const int64_t B = 2, H = 2, T = 13, D = 4, Dv = 3;
  for (const Poison& p : poisons(T))
    for (const auto& [mname, m] : masks(B, T)) {
      const Inputs in = inputs(B, H, T, D, Dv, p);
      const Run ref = run(composed(m, in.scale), in.q, in.k, in.v, in.w);
      for (auto [br, bc] : {std::pair<int64_t, int64_t>{1, 1}, {128, 128}, {2, 3}, {5, 4}, {3, 13}})
        for (FlashBackward sched : {FlashBackward::by_head, FlashBackward::by_blocks}) {
          const FlashOptions opt = FlashOptions().rows(br).cols(bc).backward(sched);
          const std::string what = p.name + ", " + mname + ", tiles " + std::to_string(br) +
                                   "x" + std::to_string(bc) +
                                   (sched == FlashBackward::by_head ? ", by_head" : ", by_blocks");
          same(run([&](auto& q, auto& k, auto& v) { return flash_attention(q, k, v, m, in.scale, opt); },
                   in.q, in.k, in.v, in.w),
               ref, "flash_attention, " + what);
        }
    }
}

TEST_CASE("NaN and inf propagate through the side-by-side and packed flash entries") {
  manual_seed(32);
  const int64_t B = 2, H = 2, T = 11, D = 4;
  for (const Poison& p : poisons(T))
    for (const auto& [mname, m] : masks(B, T)) {
      const Inputs in = inputs(B, H, T, D, D, p);
      const Run ref = run(composed(m, in.scale), in.q, in.k, in.v, in.w);
      for (int64_t tile : {1, 3, 128}) {
        const FlashOptions opt = FlashOptions().rows(tile).cols(tile);
        const std::string what = p.name + ", " + mname + ", tile " + std::to_string(tile);
        same(run([&](auto& q, auto& k, auto& v) {
                   return split_heads(flash_attention_heads(merge(q), merge(k), merge(v), H, m, in.scale, opt), H);
                 }, in.q, in.k, in.v, in.w),
             ref, "flash_attention_heads, " + what);
        same(run([&](auto& q, auto& k, auto& v) {
                   return split_heads(flash_attention_packed(cat({merge(q), merge(k), merge(v)}, 2), H, m,
                                                       in.scale, opt), H);
                 }, in.q, in.k, in.v, in.w),
             ref, "flash_attention_packed (qkv), " + what);
        same(run([&](auto& q, auto& k, auto& v) {
                   return split_heads(flash_attention_packed(merge(q), cat({merge(k), merge(v)}, 2), H, m,
                                                       in.scale, opt), H);
                 }, in.q, in.k, in.v, in.w),
             ref, "flash_attention_packed (q, kv), " + what);
      }
    }
}

TEST_CASE("NaN and inf propagate through scaled_dot_product, sparse, chunked and sliding-window attention") {
  manual_seed(33);
  const int64_t B = 2, H = 2, T = 10, D = 4, Dv = 3;
  for (const Poison& p : poisons(T))
    for (const auto& [mname, m] : masks(B, T)) {
      const Inputs in = inputs(B, H, T, D, Dv, p);
      const std::string what = p.name + ", " + mname;
      const Run clean = run(composed(m, {}), in.cq, in.ck, in.cv, in.w);
      const Run sdpa = run([&](auto& q, auto& k, auto& v) {
        return nn::scaled_dot_product_attention(q, k, v, m, {}, 0, false, in.scale).context;
      }, in.q, in.k, in.v, in.w);
      // An infinite scale: these scale q, the composed reference the scores, and
      // (q * inf) . k can be inf - inf = NaN where (q . k) * inf is +-inf: chunked is then
      // compared with scaled_dot_product_attention itself.
      const bool inf_scale = in.scale && std::isinf(*in.scale);
      const Run ref = inf_scale ? sdpa : run(composed(m, in.scale), in.q, in.k, in.v, in.w);
      if (!inf_scale) same(sdpa, ref, "scaled_dot_product_attention, " + what);
      same(run([&](auto& q, auto& k, auto& v) {  // a pattern of all ones: every key
             return nn::sparse_attention(q, k, v, ones({T, T}), m, in.scale).context;
           }, in.q, in.k, in.v, in.w),
           sdpa, "sparse_attention, " + what);
      for (int64_t chunk : {1, 3, 16})
        same(run([&](auto& q, auto& k, auto& v) {
                   return nn::chunked_attention(q, k, v, m, chunk, in.scale);
                 }, in.q, in.k, in.v, in.w),
             ref, "chunked_attention " + std::to_string(chunk) + ", " + what);
      for (int64_t block : {0, 3}) {  // a window of T - 1: every key, banded in blocks
        if (!std::isnan(p.value)) continue;  // Nan::dependent needs a NaN
        same(run([&](auto& q, auto& k, auto& v) {
                   return nn::sliding_window_attention(q, k, v, m, T - 1, in.scale, 0, false, block);
                 }, in.q, in.k, in.v, in.w),
             ref, "sliding_window_attention, block " + std::to_string(block) + ", " + what,
             Nan::dependent, clean);
      }
    }
}

TEST_CASE("NaN and inf propagate through sliding-window attention as through its composed mask") {
  manual_seed(34);
  const int64_t B = 2, H = 1, T = 12, D = 4, Dv = 3, w = 2;
  for (const Poison& p : poisons(T))
    for (bool causal : {false, true}) {
      if (!std::isnan(p.value)) continue;  // Nan::dependent needs a NaN
      const Inputs in = inputs(B, H, T, D, Dv, p);
      const Tensor pad = left_padding(B, T);
      const AttentionMask m = causal ? AttentionMask().key_padding(pad).causal()
                                     : AttentionMask().key_padding(pad);
      const Tensor pattern = nn::sliding_window_pattern(T, w, causal);  // (T, T)
      auto reference = [&](std::optional<double> s) {
        return [&pad, &pattern, s](auto& q, auto& k, auto& v) {
          return nn::scaled_dot_product_attention(
                     q, k, v, AttentionMask().key_padding(pad).mask(pattern), {}, 0, false, s)
              .context;
        };
      };
      const Run ref = run(reference(in.scale), in.q, in.k, in.v, in.w);
      const Run clean = run(reference({}), in.cq, in.ck, in.cv, in.w);
      for (int64_t block : {0, 3, 5})
        same(run([&](auto& q, auto& k, auto& v) {
                   return nn::sliding_window_attention(q, k, v, m, w, in.scale, 0, false, block);
                 }, in.q, in.k, in.v, in.w),
             ref, "sliding_window_attention w 2, block " + std::to_string(block) + ", " + p.name +
                      (causal ? ", causal" : ""), Nan::dependent, clean);
    }
}

TEST_CASE("NaN and inf propagate through linear attention as through its composed reference") {
  manual_seed(35);
  const int64_t B = 2, H = 2, T = 9, D = 4, Dv = 3;
  for (const Poison& p : poisons(T)) {
    if (p.which == 3 || !std::isnan(p.value)) continue;  // no scale; Nan::dependent needs a NaN
    for (bool causal : {false, true})
      for (bool padded : {false, true}) {
        const Inputs in = inputs(B, H, T, D, Dv, p);
        const Tensor pad = padded ? left_padding(B, T) : Tensor();
        const std::string what = p.name + (causal ? ", causal" : "") + (padded ? ", padded" : "");
        auto reference = [&](auto& q, auto& k, auto& v) {
          return linear_attention_reference(q, k, v, causal, pad);
        };
        same(run([&](auto& q, auto& k, auto& v) { return linear_attention(q, k, v, causal, pad); },
                 in.q, in.k, in.v, in.w),
             run(reference, in.q, in.k, in.v, in.w), "linear_attention, " + what, Nan::dependent,
             run(reference, in.cq, in.ck, in.cv, in.w));
      }
  }
}

TEST_CASE("NaN in the input reaches MultiheadAttention's output on the flash path") {
  manual_seed(36);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  mha->eval();
  Tensor x = randn({2, 6, 8});
  x.data()[(1 * 6 + 2) * 8 + 3] = kNaN;  // batch 1, position 2
  for (const AttentionMask& m : {AttentionMask(), AttentionMask().causal()}) {
    const Tensor fast = mha->forward(x, x, x, m, {}, /*need_weights=*/false).output;
    const Tensor slow = mha->forward(x, x, x, m, {}, /*need_weights=*/true).output;
    same(fast, slow, m.is_causal() ? "causal" : "no mask");
    int64_t nans = 0;
    for (int64_t i = 0; i < fast.numel(); ++i) nans += std::isnan(fast.data()[i]);
    CHECK(nans > 0);
  }
}

// D = 0: every score is the empty sum 0, the weights are uniform over the visible keys and
// the output is their mean of v, as in PyTorch 2's scaled_dot_product_attention, whose
// math path scales q (empty here) rather than the scores; the default scale 1/sqrt(0) = inf
// never multiplies anything. (torch 1.13 has no such function, and its composed
// (q @ k^T) * (1 / sqrt(0)) is 0 * inf = NaN: heed scales q, as scaled_dot_product does.)
TEST_CASE("D = 0: every attention path gives the mean of the visible values") {
  const int64_t B = 2, H = 2, T = 7, Dv = 3;
  manual_seed(37);
  const Tensor q = zeros({B, H, T, 0}), k = zeros({B, H, T, 0}), v = randn({B, H, T, Dv});
  const Tensor w = randn({B, H, T, Dv});
  for (const auto& [mname, m] : masks(B, T)) {
    // expected: out[b, h, r] = mean of v[b, h, c] over the keys c row r sees (0 if none)
    Tensor want = zeros({B, H, T, Dv}), dv_want = zeros({B, H, T, Dv});
    Tensor vis = ones({B, H, T, T});  // (B, H, T, T), 1 where row r sees key c
    if (nn::visible("test", vis.shape(), m).defined()) vis = vis * nn::visible("test", vis.shape(), m);
    for (int64_t bh = 0; bh < B * H; ++bh)
      for (int64_t r = 0; r < T; ++r) {
        std::vector<int64_t> seen;
        for (int64_t c = 0; c < T; ++c)
          if (vis.data()[(bh * T + r) * T + c] != 0) seen.push_back(c);
        for (int64_t c : seen)
          for (int64_t d = 0; d < Dv; ++d) {
            want.data()[(bh * T + r) * Dv + d] += v.data()[(bh * T + c) * Dv + d] / seen.size();
            dv_want.data()[(bh * T + c) * Dv + d] += w.data()[(bh * T + r) * Dv + d] / seen.size();
          }
      }
    for (std::optional<double> scale : {std::optional<double>(), std::optional<double>(2.0)}) {
      const std::string what = mname + (scale ? ", scale 2" : ", default scale");
      const Run ref = run(composed(m, scale), q, k, v, w);
      same(ref.out, want, "flash_attention_composed, " + what);
      same(ref.dv, dv_want, "flash_attention_composed dv, " + what);
      for (int64_t tile : {1, 3, 128})
        for (FlashBackward sched : {FlashBackward::by_head, FlashBackward::by_blocks}) {
          const FlashOptions opt = FlashOptions().rows(tile).cols(tile).backward(sched);
          same(run([&](auto& a, auto& b, auto& c) { return flash_attention(a, b, c, m, scale, opt); },
                   q, k, v, w),
               ref, "flash_attention, tile " + std::to_string(tile) + ", " + what);
        }
      same(run([&](auto& a, auto& b, auto& c) {
                 return nn::scaled_dot_product_attention(a, b, c, m, {}, 0, false, scale).context;
               }, q, k, v, w),
           ref, "scaled_dot_product_attention, " + what);
      same(run([&](auto& a, auto& b, auto& c) { return nn::chunked_attention(a, b, c, m, 3, scale); },
               q, k, v, w),
           ref, "chunked_attention, " + what);
      same(run([&](auto& a, auto& b, auto& c) {
                 return nn::sliding_window_attention(a, b, c, m, T - 1, scale);
               }, q, k, v, w),
           ref, "sliding_window_attention, " + what);
    }
  }
}
