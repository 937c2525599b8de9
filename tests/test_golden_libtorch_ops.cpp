// test_golden_libtorch_ops.cpp - sin, cos, norm, mm, bmm, t, expand_as, index, index_put,
// smooth_l1_loss and huber_loss against PyTorch (tests/golden/libtorch_ops.bin, made by
// tests/golden/gen_libtorch_ops.py: outputs and gradients).
#include "golden/golden.h"
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/mm.h>
#include <heed/autograd/ops/norm.h>
#include <heed/autograd/ops/smooth_l1_loss.h>
#include <heed/autograd/ops/tensor_index.h>
#include <heed/autograd/ops/trig.h>
#include <heed/layers/loss.h>
#include "helpers.h"

using namespace heed;
using namespace heed::indexing;
using golden::check_case;
using In = std::vector<Tensor>;
namespace F = heed::nn::functional;

namespace {

const golden::File& ops() {
  static const golden::File f("tests/golden/libtorch_ops.bin");
  return f;
}

}  // namespace

TEST_CASE("golden: sin and cos") {
  check_case(ops(), "sin", {"x"}, [](const In& in) { return sin(in[0]); });
  check_case(ops(), "cos", {"x"}, [](const In& in) { return in[0].cos(); });
}

TEST_CASE("golden: norm, p = 2 over all and dim 1, p = 1 keepdim, p = 3 over two dims, inf") {
  check_case(ops(), "norm_p2_all", {"x"}, [](const In& in) { return in[0].norm(); });
  check_case(ops(), "norm_p2_dim1", {"x"}, [](const In& in) { return in[0].norm(2, 1); });
  check_case(ops(), "norm_p1_dimneg1_keepdim", {"x"}, [](const In& in) { return norm(in[0], 1, -1, true); });
  check_case(ops(), "norm_p3_dims02", {"x"}, [](const In& in) { return norm(in[0], 3, {0, 2}); });
  check_case(ops(), "norm_inf_dim1", {"x"},
             [](const In& in) { return norm(in[0], std::numeric_limits<double>::infinity(), 1); });
}

TEST_CASE("golden: mm, bmm, t, expand_as") {
  check_case(ops(), "mm", {"a", "b"}, [](const In& in) { return mm(in[0], in[1]); });
  check_case(ops(), "bmm", {"a", "b"}, [](const In& in) { return in[0].bmm(in[1]); });
  check_case(ops(), "t", {"x"}, [](const In& in) { return in[0].t() * 2; });
  check_case(ops(), "expand_as", {"x", "y"}, [](const In& in) { return in[0].expand_as(in[1]) * in[1]; });
}

TEST_CASE("golden: index with strided slices, integers, None and Ellipsis; index_put") {
  check_case(ops(), "index_strided", {"x"}, [](const In& in) { return in[0].index({Slice(), Slice(0, None, 2)}); });
  check_case(ops(), "index_int", {"x"}, [](const In& in) { return in[0].index({Slice(1, -1), -1}); });
  check_case(ops(), "index_none_ellipsis", {"x"},
             [](const In& in) { return in[0].index({None, Ellipsis, Slice(None, None, 3)}); });
  check_case(ops(), "index_put_strided", {"x", "v"},
             [](const In& in) { return index_put(in[0], {Slice(), Slice(1, None, 2)}, in[1]); });
  check_case(ops(), "index_put_broadcast", {"x", "v"},
             [](const In& in) { return index_put(in[0], {Slice(1, 3), Slice(None, None, 2)}, in[1]); });
}

TEST_CASE("golden: smooth_l1_loss and huber_loss, every reduction, through both spellings") {
  const std::pair<const char*, Reduction> rs[] = {
      {"mean", Reduction::Mean}, {"sum", Reduction::Sum}, {"none", Reduction::None}};
  for (const auto& [name, r] : rs) {
    const std::string n = name;
    CAPTURE(n);
    check_case(ops(), "smooth_l1_" + n, {"x", "y"}, [r = r](const In& in) {
      return F::smooth_l1_loss(in[0], in[1], F::SmoothL1LossFuncOptions().reduction(r));
    });
    check_case(ops(), "smooth_l1_beta05_" + n, {"x", "y"},
               [r = r](const In& in) { return smooth_l1_loss(in[0], in[1], r, 0.5); });
    check_case(ops(), "huber_" + n, {"x", "y"},
               [r = r](const In& in) { return huber_loss(in[0], in[1], r); });
    check_case(ops(), "huber_delta2_" + n, {"x", "y"}, [r = r](const In& in) {
      return F::huber_loss(in[0], in[1], F::HuberLossFuncOptions().delta(2).reduction(r));
    });
  }
}
