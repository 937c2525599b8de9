// test_golden_bf16.cpp - heed under set_float32_matmul_precision("medium") against PyTorch's
// bf16 autocast (tests/golden/gen_bf16.py -> tests/golden/bf16.bin): Linear, batched matmul and
// causal attention (flash and composed), forward and backward, to bfloat16's tolerance.
//
// Autocast rounds more than heed's "medium" does (its outputs, the bias and the softmax are
// bfloat16; heed rounds only each product's inputs), so the two agree to a few units of
// bfloat16's 2^-8, not bit for bit: rtol and atol 2^-6 (relative to the largest value of each
// array).
#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/autograd/ops/attention/scaled_dot_product.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/linear.h>
#include <heed/core/matmul_precision.h>
#include "golden/golden.h"
#include "helpers.h"

using namespace heed;

namespace {
const golden::File& bf16_goldens() {
  static const golden::File f("tests/golden/bf16.bin");
  return f;
}
const auto kBf16 = golden::Tolerance().rtol(0x1p-6).atol(0x1p-6);
}  // namespace

TEST_CASE("medium vs PyTorch bf16 autocast: Linear forward and backward") {
  MatmulPrecisionGuard medium("medium");
  golden::check_case(bf16_goldens(), "linear", {"x", "weight", "bias"},
                     [](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); }, kBf16);
}

TEST_CASE("medium vs PyTorch bf16 autocast: batched matmul forward and backward") {
  MatmulPrecisionGuard medium("medium");
  golden::check_case(bf16_goldens(), "matmul_batched", {"a", "b"},
                     [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }, kBf16);
}

TEST_CASE("medium vs PyTorch bf16 autocast: causal attention, flash (tiles of 8 x 8) and composed, forward and backward") {
  MatmulPrecisionGuard medium("medium");
  golden::check_case(bf16_goldens(), "attention_causal", {"q", "k", "v"}, [](const std::vector<Tensor>& in) {
    return flash_attention(in[0], in[1], in[2], AttentionMask().causal(), {}, FlashOptions().rows(8).cols(8));
  }, kBf16);
  golden::check_case(bf16_goldens(), "attention_causal", {"q", "k", "v"}, [](const std::vector<Tensor>& in) {
    return scaled_dot_product_attention(in[0], in[1], in[2], AttentionMask().causal()).context;
  }, kBf16);
}
