// test_golden_small_ops.cpp - log1p, normalize and mish against PyTorch
// (tests/golden/small_ops.bin, made by tests/golden/gen_small_ops.py: outputs and gradients).
#include "golden/golden.h"
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/normalize.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/functional.h>
#include "helpers.h"

using namespace heed;
using golden::check_case;
using In = std::vector<Tensor>;

namespace {

const golden::File& small_ops() {
  static const golden::File f("tests/golden/small_ops.bin");
  return f;
}

}  // namespace

TEST_CASE("golden: log1p on (-0.9, 4), with tiny values") {
  check_case(small_ops(), "log1p", {"x"}, [](const In& in) { return log1p(in[0]); });
}

TEST_CASE("golden: mish on [-8, 8], past float's e^x overflow, and its negative tail") {
  check_case(small_ops(), "mish", {"x"}, [](const In& in) { return mish(in[0]); });
  check_case(small_ops(), "mish", {"x"}, [](const In& in) { return nn::Mish()(in[0]); });
  check_case(small_ops(), "mish_negative_tail", {"x"}, [](const In& in) { return nn::functional::mish(in[0]); },
             golden::Tolerance().atol(0));
}

TEST_CASE("golden: F.normalize, p = 2 over dims 1 and -1, p = 1 and 3, a zero row") {
  check_case(small_ops(), "normalize_p2_dim1", {"x"}, [](const In& in) { return normalize(in[0]); });
  check_case(small_ops(), "normalize_p2_dimneg1", {"x"},
             [](const In& in) { return nn::functional::normalize(in[0], 2, -1); });
  check_case(small_ops(), "normalize_p1_dim0", {"x"}, [](const In& in) { return normalize(in[0], 1, 0); });
  check_case(small_ops(), "normalize_p3_dim1", {"x"}, [](const In& in) { return normalize(in[0], 3, 1); });
  check_case(small_ops(), "normalize_zero_row", {"x"}, [](const In& in) { return normalize(in[0]); });
}

TEST_CASE("log1p keeps the digits of tiny x that log(1 + x) loses") {
  Tensor x = from_vector({1e-10f, -1e-8f, 0}, {3});
  Tensor y = log1p(x);
  CHECK(y.data()[0] == doctest::Approx(1e-10).epsilon(1e-6));
  CHECK(y.data()[1] == doctest::Approx(-1e-8).epsilon(1e-6));
  CHECK(y.data()[2] == 0);
  CHECK(log(x + 1).data()[0] == 0);  // what log1p is for
}

TEST_CASE("normalize: the fused op against its composed twin, and its errors") {
  manual_seed(86);
  for (double p : {1.0, 2.0, 3.0}) {
    for (int64_t dim : {0, 1, -1}) {
      CAPTURE(p);
      CAPTURE(dim);
      heed::test::check_fused_matches_composed(
          [p, dim](const std::vector<Tensor>& v) { return normalize(v[0], p, dim); },
          [p, dim](const std::vector<Tensor>& v) { return normalize_reference(v[0], p, dim); },
          {randn({3, 4, 5})}, 1e-5, 1e-6);
    }
  }
  // A zero row: output 0 and gradient dy / eps, where the composed form's gradient is NaN.
  Tensor z = zeros({2, 3}).requires_grad_();
  Tensor y = normalize(z, 2, 1, 0.5);
  y.backward(ones({2, 3}));
  CHECK(y.abs().sum().item() == 0);
  CHECK(z.grad().data()[0] == 2);
  CHECK(heed::test::error_of([] { normalize(ones({2, 3}), 2, 2); }).find("normalize") != std::string::npos);
  CHECK(heed::test::error_of([] { normalize(ones({2, 3}), 0.5); }).find("p must be finite and >= 1, got 0.5") != std::string::npos);
  CHECK(heed::test::error_of([] { normalize(ones({2, 3}), 2, 1, -1); }).find("eps must be >= 0") != std::string::npos);
  // NaN stays NaN in the output and in the gradient
  Tensor n = from_vector({1, NAN, 2, 3}, {2, 2}).requires_grad_();
  Tensor yn = normalize(n);
  yn.backward(ones({2, 2}));
  CHECK(std::isnan(yn.data()[0]));
  CHECK(std::isnan(n.grad().data()[0]));
  CHECK(!std::isnan(n.grad().data()[2]));
}
