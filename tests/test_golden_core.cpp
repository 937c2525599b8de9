// test_golden_core.cpp - heed's core ops against PyTorch (tests/golden/core.bin).
//
// Each case of core.bin (made by tests/golden/gen_core.py, which shows the torch call)
// stores inputs, torch's float64 output, an upstream gradient dy and torch's input
// gradients; check_case runs the heed op on the same float32 inputs and compares the
// output and every gradient (rule: tests/golden/golden.h, rtol 1e-5, atol 1e-6 x scale).
#include <algorithm>

#include "golden/golden.h"
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/functional.h>
#include "helpers.h"

using namespace heed;
using golden::check_case;
using In = std::vector<Tensor>;

namespace {

const golden::File& core() {
  static const golden::File f("tests/golden/core.bin");
  return f;
}

}  // namespace

// ---- softmax family ----
TEST_CASE("golden: softmax over dims -1, 0, 1 of (3,4,5)") {
  check_case(core(), "softmax_dimneg1", {"x"}, [](const In& in) { return softmax(in[0], -1); });
  check_case(core(), "softmax_dim0", {"x"}, [](const In& in) { return softmax(in[0], 0); });
  check_case(core(), "softmax_dim1", {"x"}, [](const In& in) { return softmax(in[0], 1); });
}

TEST_CASE("golden: log_softmax over dims -1, 0, 1 of (3,4,5)") {
  check_case(core(), "log_softmax_dimneg1", {"x"}, [](const In& in) { return log_softmax(in[0], -1); });
  check_case(core(), "log_softmax_dim0", {"x"}, [](const In& in) { return log_softmax(in[0], 0); });
  check_case(core(), "log_softmax_dim1", {"x"}, [](const In& in) { return log_softmax(in[0], 1); });
}

TEST_CASE("golden: softmax with -inf masked entries (no row fully masked)") {
  check_case(core(), "softmax_masked", {"x"}, [](const In& in) { return softmax(in[0], -1); });
}

TEST_CASE("golden: softmax of large logits (x * 100)") {
  check_case(core(), "softmax_large", {"x"}, [](const In& in) { return softmax(in[0], -1); });
}

TEST_CASE("golden: log_softmax of large logits (x * 100)") {
  check_case(core(), "log_softmax_large", {"x"}, [](const In& in) { return log_softmax(in[0], -1); });
}

// ---- matmul with broadcasting ----
TEST_CASE("golden: matmul broadcasting (2,3,4)@(4,5) (2,1,3,4)@(3,4,2) (3,4)@(2,4,5)") {
  const auto mm = [](const In& in) { return matmul(in[0], in[1]); };
  check_case(core(), "matmul_3d_2d", {"a", "b"}, mm);
  check_case(core(), "matmul_4d_3d", {"a", "b"}, mm);
  check_case(core(), "matmul_2d_3d", {"a", "b"}, mm);
}

TEST_CASE("golden: matmul with 1-D operands (4)@(4,5) (3,4)@(4) (4)@(4)") {
  const auto mm = [](const In& in) { return matmul(in[0], in[1]); };
  check_case(core(), "matmul_1d_2d", {"a", "b"}, mm);
  check_case(core(), "matmul_2d_1d", {"a", "b"}, mm);
  check_case(core(), "matmul_1d_1d", {"a", "b"}, mm);
}

TEST_CASE("golden: attention scores q @ k.transpose(-2,-1)") {
  check_case(core(), "matmul_q_kT", {"q", "k"},
             [](const In& in) { return matmul(in[0], in[1].transpose(-2, -1)); });
}

// ---- elementwise nonlinearities ----
TEST_CASE("golden: gelu exact on [-6, 6]") {
  check_case(core(), "gelu_exact", {"x"}, [](const In& in) { return gelu(in[0]); });
}

TEST_CASE("golden: gelu tanh approximation on [-6, 6]") {
  check_case(core(), "gelu_tanh", {"x"}, [](const In& in) { return gelu(in[0], "tanh"); });
}

TEST_CASE("golden: tanh") {
  check_case(core(), "tanh", {"x"}, [](const In& in) { return tanh(in[0]); });
}

TEST_CASE("golden: sigmoid") {
  check_case(core(), "sigmoid", {"x"}, [](const In& in) { return sigmoid(in[0]); });
}

TEST_CASE("golden: elu, alpha 1 and 0.5") {
  check_case(core(), "elu", {"x"}, [](const In& in) { return elu(in[0]); });
  check_case(core(), "elu_alpha0.5", {"x"}, [](const In& in) { return elu(in[0], real(0.5)); });
}

TEST_CASE("golden: leaky_relu, slope 0.01 (the default) and 0.2, as function and module") {
  check_case(core(), "leaky_relu", {"x"}, [](const In& in) { return nn::LeakyReLU()(in[0]); });
  check_case(core(), "leaky_relu_0.2", {"x"}, [](const In& in) {
    return nn::functional::leaky_relu(in[0], nn::functional::LeakyReLUFuncOptions().negative_slope(0.2));
  });
}

TEST_CASE("golden: softplus, as op, function and module, in its linear region and both tails") {
  check_case(core(), "softplus", {"x"}, [](const In& in) { return softplus(in[0]); });
  check_case(core(), "softplus_beta2_t5", {"x"}, [](const In& in) {
    return nn::functional::softplus(in[0], nn::functional::SoftplusFuncOptions().beta(2).threshold(5));
  });
  // e^-80 is 1.8e-35: relative error only (atol 0), so a softplus that rounds it to 0 fails
  check_case(core(), "softplus_negative_tail", {"x"}, [](const In& in) { return nn::Softplus()(in[0]); },
             golden::Tolerance().atol(0));
  check_case(core(), "softplus_linear_region", {"x"}, [](const In& in) { return softplus(in[0]); });
}

// ---- reductions ----
TEST_CASE("golden: var over dim 1, unbiased") {
  check_case(core(), "var_dim1_unbiased", {"x"}, [](const In& in) { return var(in[0], 1, true); });
}

TEST_CASE("golden: mean over a dim, with and without keepdim") {
  check_case(core(), "mean_dim1", {"x"}, [](const In& in) { return mean(in[0], 1); });
  check_case(core(), "mean_dimneg1_keepdim", {"x"}, [](const In& in) { return mean(in[0], -1, true); });
}

// Keeps this file and gen_core.py in step: a case added to the generator must be checked above.
TEST_CASE("golden: every case in core.bin is checked by this file") {
  const std::vector<std::string> checked = {
      "softmax_dimneg1", "softmax_dim0", "softmax_dim1", "log_softmax_dimneg1", "log_softmax_dim0",
      "log_softmax_dim1", "softmax_masked", "softmax_large", "log_softmax_large",
      "matmul_3d_2d", "matmul_4d_3d", "matmul_2d_3d", "matmul_1d_2d", "matmul_2d_1d",
      "matmul_1d_1d", "matmul_q_kT", "gelu_exact", "gelu_tanh", "tanh", "sigmoid", "elu",
      "elu_alpha0.5", "leaky_relu", "leaky_relu_0.2", "softplus", "softplus_beta2_t5",
      "softplus_negative_tail", "softplus_linear_region", "var_dim1_unbiased", "mean_dim1", "mean_dimneg1_keepdim"};
  for (const std::string& name : core().cases())
    if (std::find(checked.begin(), checked.end(), name) == checked.end())
      FAIL_CHECK("core.bin case '" << name << "' has no check in test_golden_core.cpp");
  for (const std::string& name : checked)
    if (!core().has(name)) FAIL_CHECK("core.bin lacks case '" << name << "'");
}
