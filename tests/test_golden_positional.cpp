// test_golden_positional.cpp - heed's position encodings against PyTorch references
// (tests/golden/positional.bin, made by tests/golden/gen_positional.py, which shows each
// reference): the usual PyTorch sinusoidal module, LLaMA's and Hugging Face's RoPE, Shaw et al.'s
// relative attention written as the paper, and the ALiBi reference code's slopes.
// Outputs and gradients in float32 against torch's float64 (rtol 1e-5, atol 1e-6 x scale).
#include <algorithm>
#include <utility>

#include <heed/autograd/ops/attention/alibi.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/attention/absolute_position.h>
#include <heed/layers/attention/positional.h>
#include <heed/layers/attention/relative_position.h>
#include <heed/layers/attention/rope.h>
#include "golden/golden.h"
#include "helpers.h"

using namespace heed;

namespace {

const golden::File& positional() {
  static const golden::File f("tests/golden/positional.bin");
  return f;
}

void check(const golden::Check& c) { CHECK_MESSAGE(c.ok, c.message); }

}  // namespace

TEST_CASE("golden positional: sinusoidal table = the usual PyTorch PositionalEncoding (run in float64)") {
  const golden::File& f = positional();
  for (auto [L, d] : {std::pair<int64_t, int64_t>(1024, 8), std::pair<int64_t, int64_t>(50, 64)}) {
    const std::string c = "sinusoidal_" + std::to_string(L) + "x" + std::to_string(d);
    const Tensor heed_pe = nn::sinusoidal_table(L, d).reshape({1, L, d});
    check(golden::compare(heed_pe, f.array(c, "pe"), c + " pe",
                          golden::Tolerance().rtol(1e-6).atol(1e-7)));
    check(golden::compare(nn::SinusoidalPositionalEncoding(d, L)->pe, f.array(c, "pe"), c + " buffer"));
  }
  // That code verbatim, in float32, forms pos * div_term in float32: at pos ~1000 its
  // angles are off by up to ~1000 * 6e-8 (9e-6 in its values here). heed rounds only the result.
  const golden::Check f32 = golden::compare(f.tensor("sinusoidal_1024x8", "pe_float32"),
                                            f.array("sinusoidal_1024x8", "pe"), "PyTorch float32 table");
  CHECK_MESSAGE(!f32.ok, f32.message);

  nn::SinusoidalPositionalEncoding enc(16, 40);
  golden::check_case(f, "sinusoidal_module", {"x"}, [&enc](const std::vector<Tensor>& in) {
    return enc->forward(in[0]);
  });
}

TEST_CASE("golden positional: RoPE = LLaMA's apply_rotary_emb (interleaved), HF rotate_half") {
  const golden::File& f = positional();
  auto rope = [](int64_t offset, double base, bool half) {
    return [=](const std::vector<Tensor>& in) { return nn::apply_rotary(in[0], offset, base, half); };
  };
  golden::check_case(f, "rope_interleaved", {"x"}, rope(0, 10000, false));
  golden::check_case(f, "rope_offset17_base500", {"x"}, rope(17, 500, false));
  golden::check_case(f, "rope_long_offset", {"x"}, rope(3000, 10000, false));
  golden::check_case(f, "rope_half_split", {"x"}, rope(3, 10000, true));
}

TEST_CASE("golden positional: RelativeSelfAttention = Shaw et al. written as the paper") {
  const golden::File& f = positional();
  const std::vector<std::pair<std::string, std::string>> names = {  // golden array -> parameter
      {"wq", "q_proj.weight"}, {"bq", "q_proj.bias"}, {"wk", "k_proj.weight"},
      {"bk", "k_proj.bias"},   {"wv", "v_proj.weight"}, {"bv", "v_proj.bias"},
      {"wo", "out_proj.weight"}, {"bo", "out_proj.bias"},
      {"key_table", "relative.key_table"}, {"value_table", "relative.value_table"}};
  struct Spec { const char* name; int64_t E, H, k; bool causal; };
  for (const Spec s : {Spec{"relative_attention", 8, 2, 2, false},
                       Spec{"relative_attention_causal_k10", 6, 3, 10, true},
                       Spec{"relative_attention_one_head_k0", 4, 1, 0, false}}) {
    CAPTURE(s.name);
    nn::RelativeSelfAttention attn(nn::RelativeSelfAttentionOptions(s.E, s.H, s.k));
    const nn::NamedTensors params = attn->named_parameters();
    REQUIRE(params.size() == names.size());
    auto param = [&](const std::string& n) {
      auto it = std::find_if(params.begin(), params.end(), [&](auto& p) { return p.first == n; });
      REQUIRE(it != params.end());
      return it->second;
    };
    {
      NoGradGuard ng;
      for (auto& [g, p] : names) param(p).copy_(f.tensor(s.name, g));
    }
    Tensor x = f.tensor(s.name, "x").requires_grad_();
    const Tensor out = attn->forward(x, nn::AttentionMask().causal(s.causal)).output;
    check(golden::compare(out, f.array(s.name, "out"), std::string(s.name) + " out"));
    out.backward(f.tensor(s.name, "dy"));
    check(golden::compare(x.grad(), f.array(s.name, "grad_x"), std::string(s.name) + " grad_x"));
    for (auto& [g, p] : names)
      check(golden::compare(param(p).grad(), f.array(s.name, "grad_" + g),
                            std::string(s.name) + " grad_" + g));
  }
}

TEST_CASE("golden positional: ALiBi slopes = the reference code's get_slopes, 1 to 32 heads") {
  for (int64_t n = 1; n <= 32; ++n) {
    const std::string a = "n" + std::to_string(n);
    check(golden::compare(nn::alibi_slopes(n), positional().array("alibi_slopes", a), "slopes " + a,
                          golden::Tolerance().rtol(1e-7).atol(0)));
  }
}
