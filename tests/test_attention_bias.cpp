// test_attention_bias.cpp - masks hold only 0 and 1 (a PyTorch mask passed straight in is an
// error that says how to convert, on every path a mask enters), and attn_bias, the additive
// float bias of scaled_dot_product_attention and MultiheadAttention (torch's float attn_mask).
#include <cmath>
#include <limits>
#include <string>

#include <heed/core/random.h>
#include <heed/autograd/ops/attention/alibi.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attend.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/attention/chunked_attention.h>
#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/attention/linear_attention.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/attention/scaled_dot_product.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/attention/sliding_window_attention.h>
#include <heed/autograd/ops/attention/sparse_attention.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/attention/additive_attention.h>
#include <heed/layers/attention/linear_attention.h>
#include <heed/layers/attention/multihead_attention.h>
#include <heed/layers/attention/scaled_dot_product.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;
using heed::test::error_of;

namespace {

const real kInf = std::numeric_limits<real>::infinity();

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// What torch.nn.Transformer.generate_square_subsequent_mask(T) returns: 0 on and below the
// diagonal, -inf above.
Tensor torch_causal_float_mask(int64_t T) {
  Tensor m = zeros({T, T});
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = i + 1; j < T; ++j) m.data()[i * T + j] = -kInf;
  return m;
}

// True when `msg` is the mask-value error of `op`: it names the op, says heed's convention
// and how to convert a torch mask.
bool is_mask_value_error(const std::string& msg, const std::string& op) {
  return msg.rfind(op + ":", 0) == 0 && contains(msg, "1 = may attend") &&
         contains(msg, "1 - mask") && contains(msg, "attn_bias");
}

}  // namespace

TEST_CASE("masks: a torch 0/-inf float mask is an error that says to pass it as attn_bias") {
  manual_seed(900);
  const Tensor q = randn({2, 4, 3}), k = randn({2, 4, 3}), v = randn({2, 4, 2});
  const Tensor tm = torch_causal_float_mask(4);
  const std::string msg = error_of([&] {
    nn::scaled_dot_product_attention(q, k, v, nn::AttentionMask().mask(tm));
  });
  CHECK(is_mask_value_error(msg, "scaled_dot_product_attention"));
  CHECK(contains(msg, "mask (4,4) holds -inf"));

  // passed as attn_bias it is exactly heed's causal mask
  const nn::Attended as_bias = nn::scaled_dot_product_attention(q, k, v, {}, tm);
  const nn::Attended causal = nn::scaled_dot_product_attention(q, k, v, nn::AttentionMask().causal());
  CHECK(allclose(as_bias.context, causal.context));
  CHECK(allclose(as_bias.weights, causal.weights));
}

TEST_CASE("masks: an inverted or boolean-as-float padding mask (2, -1, NaN) is an error") {
  manual_seed(901);
  const Tensor q = randn({2, 3, 4}), k = randn({2, 5, 4}), v = randn({2, 5, 3});
  for (real bad : {real(2), real(-1), std::numeric_limits<real>::quiet_NaN(), real(0.5)}) {
    Tensor pad = ones({2, 5});
    pad.data()[7] = bad;
    CAPTURE(bad);
    const std::string msg = error_of([&] {
      nn::scaled_dot_product_attention(q, k, v, nn::AttentionMask().key_padding(pad));
    });
    CHECK(is_mask_value_error(msg, "scaled_dot_product_attention"));
    CHECK(contains(msg, "key padding mask (2,5) holds"));
    CHECK(contains(msg, "flat index 7"));
  }
  // exactly 0 and 1 pass
  Tensor pad = ones({2, 5});
  pad.data()[9] = 0;
  CHECK(error_of([&] { nn::scaled_dot_product_attention(q, k, v, nn::AttentionMask().key_padding(pad)); }) ==
        "(no heed::Error thrown)");
}

TEST_CASE("masks: every path a mask enters checks its values") {
  manual_seed(902);
  const int64_t B = 2, H = 2, T = 4, D = 3;
  const Tensor q = randn({B, H, T, D}), k = randn({B, H, T, D}), v = randn({B, H, T, D});
  Tensor torch_pad = zeros({B, T});  // torch's key_padding_mask: True (1) = padding
  torch_pad.data()[T - 1] = 1;
  Tensor twos = full({B, T}, 2);
  const Tensor tm = torch_causal_float_mask(T);
  const nn::AttentionMask bad_pad = nn::AttentionMask().key_padding(twos);
  const nn::AttentionMask bad_mask = nn::AttentionMask().mask(tm);

  CHECK(is_mask_value_error(error_of([&] { flash_attention(q, k, v, bad_pad); }), "flash_attention"));
  CHECK(is_mask_value_error(error_of([&] { flash_attention(q, k, v, bad_mask); }), "flash_attention"));
  CHECK(is_mask_value_error(error_of([&] { nn::chunked_attention(q, k, v, bad_mask, 2); }),
                            "chunked_attention"));
  CHECK(is_mask_value_error(error_of([&] { nn::sliding_window_attention(q, k, v, bad_pad, 1); }),
                            "sliding_window_attention"));
  CHECK(is_mask_value_error(error_of([&] { linear_attention(q, k, v, false, twos); }),
                            "linear_attention"));
  CHECK(is_mask_value_error(error_of([&] { nn::sparse_attention(q, k, v, ones({T, T}), bad_mask); }),
                            "sparse_attention"));

  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(4, 2));
  const Tensor x = randn({B, T, 4});
  CHECK(is_mask_value_error(error_of([&] { mha->forward(x, x, x, bad_mask); }), "MultiheadAttention"));
  CHECK(is_mask_value_error(error_of([&] { mha->forward(x, x, x, bad_pad, {}, false); }),
                            "MultiheadAttention"));

  nn::LinearAttention lin(nn::LinearAttentionOptions(4, 2));
  CHECK(is_mask_value_error(error_of([&] { lin->forward(x, x, x, bad_pad); }), "linear_attention"));

  nn::AdditiveAttention add(nn::AdditiveAttentionOptions(4, 4, 5));
  const Tensor s = randn({B, 4});  // one decoder step
  CHECK(is_mask_value_error(error_of([&] { add->forward(s, x, x, bad_pad); }), "AdditiveAttention"));

  // torch's key_padding_mask converted as the message says (1 - mask) is accepted and
  // hides the padded key
  const nn::AttentionOutput o = mha->forward(x, x, x, nn::AttentionMask().key_padding(1 - torch_pad));
  CHECK(o.weights.at({0, 1, T - 1}) == 0);
}

TEST_CASE("attn_bias: scaled_dot_product_attention adds it to the scores before mask and softmax") {
  manual_seed(903);
  const Tensor q = randn({2, 3, 4, 5}), k = randn({2, 3, 6, 5}), v = randn({2, 3, 6, 2});
  const Tensor bias = randn({3, 4, 6});  // (H, Tq, Tk): broadcast over the batch
  const nn::AttentionMask m = nn::AttentionMask().causal();
  const nn::Attended a = nn::scaled_dot_product_attention(q, k, v, m, bias);
  const Tensor e = matmul(q, k.transpose(-2, -1)) * real(1 / std::sqrt(5.0)) + bias;
  const nn::Attended ref = nn::attend("by hand", e, v, m);
  CHECK(allclose(a.context, ref.context, 1e-5, 1e-6));
  CHECK(allclose(a.weights, ref.weights, 1e-5, 1e-6));

  // ALiBi is one: alibi.h's example through attn_bias
  const Tensor ab = nn::alibi_bias(3, 4, 6);
  const nn::Attended al = nn::scaled_dot_product_attention(q, k, v, m, ab);
  const Tensor ea = matmul(q, transpose(k, -2, -1)) / real(std::sqrt(5.0)) + ab;
  CHECK(allclose(al.context, nn::attend("alibi", ea, v, m).context, 1e-5, 1e-6));

  // the module passes it through
  nn::ScaledDotProductAttention sdpa(nn::ScaledDotProductAttentionOptions().causal(true));
  CHECK(allclose(sdpa->forward(q, k, v, {}, bias).context, a.context));

  // a learned bias gets its gradient: summed over the batch it was broadcast across
  Tensor lb = zeros({4, 6}).requires_grad_();
  sum(nn::scaled_dot_product_attention(q, k, v, m, lb).context).backward();
  REQUIRE(lb.grad().defined());
  CHECK(lb.grad().shape() == Shape{4, 6});
  CHECK(lb.grad().at({0, 5}) == 0);  // hidden by the causal mask (Tq 4 < Tk 6: query 0 sees keys 0..2)
  CHECK(lb.grad().at({0, 1}) != 0);
}

TEST_CASE("attn_bias: errors name the op: shape that grows the scores, NaN, +inf") {
  manual_seed(904);
  const Tensor q = randn({2, 3, 4}), k = randn({2, 5, 4}), v = randn({2, 5, 3});
  const auto msg = [&](const Tensor& b) {
    return error_of([&] { nn::scaled_dot_product_attention(q, k, v, {}, b); });
  };
  CHECK(msg(zeros({3, 4})).rfind("scaled_dot_product_attention: attn_bias (3,4) does not broadcast to "
                                 "scores (2,3,5)", 0) == 0);
  CHECK(contains(msg(zeros({4, 3, 5})), "does not broadcast"));
  Tensor nan = zeros({3, 5});
  nan.data()[2] = std::numeric_limits<real>::quiet_NaN();
  CHECK(contains(msg(nan), "attn_bias (3,5) holds nan at flat index 2"));
  Tensor pinf = zeros({3, 5});
  pinf.data()[4] = kInf;
  CHECK(contains(msg(pinf), "never NaN or +inf"));
  Tensor minf = zeros({3, 5});
  minf.data()[4] = -kInf;  // -inf hides the key: allowed
  CHECK(nn::scaled_dot_product_attention(q, k, v, {}, minf).weights.at({1, 0, 4}) == 0);
}

TEST_CASE("attn_bias: MultiheadAttention (Tq, Tk) and (B, H, Tq, Tk), flash fallback, 3-D refused") {
  manual_seed(905);
  const int64_t B = 2, T = 4, E = 6, H = 3;
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(E, H));
  const Tensor x = randn({B, T, E});
  const Tensor tm = torch_causal_float_mask(T);

  // torch's float causal mask as a bias == heed's causal flag, with or without the weights
  const nn::AttentionOutput c = mha->forward(x, x, x, nn::AttentionMask().causal());
  const nn::AttentionOutput b = mha->forward(x, x, x, {}, tm);
  CHECK(allclose(b.output, c.output, 1e-5, 1e-6));
  CHECK(allclose(b.weights, c.weights, 1e-5, 1e-6));
  const nn::AttentionOutput nw = mha->forward(x, x, x, {}, tm, /*need_weights=*/false);
  CHECK_FALSE(nw.weights.defined());
  CHECK(allclose(nw.output, c.output, 1e-5, 1e-6));  // the composed path, not flash

  // a per-head bias (1, H, T, T) changes the heads differently; (B, H, T, T) equals it
  // when every batch element holds the same bias
  const Tensor ph = nn::alibi_bias(H, T, T).unsqueeze(0);  // (1, H, T, T)
  const nn::AttentionOutput p1 = mha->forward(x, x, x, nn::AttentionMask().causal(), ph, true, false);
  const nn::AttentionOutput p2 =
      mha->forward(x, x, x, nn::AttentionMask().causal(), cat({ph, ph}, 0), true, false);
  CHECK(allclose(p1.output, p2.output));
  CHECK_FALSE(allclose(p1.output, c.output, 1e-3, 1e-4));

  const std::string msg = error_of([&] { mha->forward(x, x, x, {}, zeros({H, T, T})); });
  CHECK(msg.rfind("MultiheadAttention: 3-D attn_bias (3,4,4) is ambiguous", 0) == 0);
  CHECK(contains(error_of([&] { mha->forward(x, x, x, {}, zeros({T, T + 1})); }),
                 "MultiheadAttention: attn_bias (4,5) does not broadcast to scores (2,3,4,4)"));
}
