// test_golden_losses.cpp - heed's losses against PyTorch (tests/golden/losses.bin).
//
// Each case of losses.bin (made by tests/golden/gen_losses.py, which shows the torch call)
// stores the float32 inputs, torch's float64 loss, an upstream gradient dy and torch's input
// gradients; check_case runs the heed loss and compares the loss and every gradient
// (rule: tests/golden/golden.h, rtol 1e-5, atol 1e-6 x scale). Class targets are stored as
// whole numbers and turned back into an IndexTensor here; weights are constants.
#include <heed/autograd/ops/loss.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/layers/loss.h>
#include "golden/golden.h"
#include "helpers.h"

using namespace heed;
using golden::check_case;
using In = std::vector<Tensor>;
namespace F = heed::nn::functional;
using nn::Reduction;

namespace {

const golden::File& losses() {
  static const golden::File f("tests/golden/losses.bin");
  return f;
}

// A golden array of whole numbers (class ids, -100 for ignored) as an IndexTensor.
IndexTensor as_ids(const Tensor& t) {
  std::vector<int64_t> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = static_cast<int64_t>(std::lround(t.data()[i]));
  return IndexTensor(v, t.shape());
}

struct Named {
  const char* suffix;
  Reduction reduction;
};
const Named kReductions[] = {{"mean", Reduction::Mean}, {"sum", Reduction::Sum}, {"none", Reduction::None}};

}  // namespace

TEST_CASE("golden: cross_entropy (N, C) with ignore_index -100 and label_smoothing 0.1") {
  for (const Named& r : kReductions) {
    const auto o = nn::CrossEntropyOptions().label_smoothing(0.1).reduction(r.reduction);
    check_case(losses(), std::string("ce_ignore_smooth_") + r.suffix, {"x", "target"},
               [&](const In& in) { return F::cross_entropy(in[0], as_ids(in[1]), o); });
  }
}

TEST_CASE("golden: cross_entropy plain, and ignore_index 0 with label_smoothing 0.2") {
  check_case(losses(), "ce_plain_mean", {"x", "target"},
             [](const In& in) { return F::cross_entropy(in[0], as_ids(in[1])); });
  const auto o = nn::CrossEntropyOptions().ignore_index(0).label_smoothing(0.2);
  check_case(losses(), "ce_ignore_index0_mean", {"x", "target"},
             [&](const In& in) { return F::cross_entropy(in[0], as_ids(in[1]), o); });
}

TEST_CASE("golden: cross_entropy with class weights, ignore_index and label_smoothing") {
  for (const Named& r : kReductions) {
    check_case(losses(), std::string("ce_weight_ignore_smooth_") + r.suffix, {"x", "target", "weight"},
               [&](const In& in) {
                 const auto o = nn::CrossEntropyOptions().weight(in[2]).label_smoothing(0.1).reduction(
                     r.reduction);
                 return F::cross_entropy(in[0], as_ids(in[1]), o);
               });
  }
}

TEST_CASE("golden: cross_entropy (N, C, d) with ignored positions and label_smoothing 0.2") {
  const auto mean = nn::CrossEntropyOptions().label_smoothing(0.2);
  check_case(losses(), "ce_3d_ignore_smooth_mean", {"x", "target"},
             [&](const In& in) { return F::cross_entropy(in[0], as_ids(in[1]), mean); });
  const auto none = nn::CrossEntropyOptions(mean).reduction(Reduction::None);
  check_case(losses(), "ce_3d_ignore_smooth_none", {"x", "target"},
             [&](const In& in) { return F::cross_entropy(in[0], as_ids(in[1]), none); });
}

TEST_CASE("golden: nll_loss(log_softmax(x)) with class weights and ignore_index") {
  for (const Named& r : kReductions) {
    check_case(losses(), std::string("nll_ignore_weight_") + r.suffix, {"x", "target", "weight"},
               [&](const In& in) {
                 const auto o = nn::NLLOptions().weight(in[2]).reduction(r.reduction);
                 return F::nll_loss(log_softmax(in[0], 1), as_ids(in[1]), o);
               });
  }
}

TEST_CASE("golden: mse_loss, gradients into input and target") {
  for (const Named& r : kReductions) {
    const auto o = nn::MSEOptions().reduction(r.reduction);
    check_case(losses(), std::string("mse_") + r.suffix, {"x", "y"},
               [&](const In& in) { return F::mse_loss(in[0], in[1], o); });
  }
}

TEST_CASE("golden: soft_margin_loss, each reduction (target a constant, as PyTorch's)") {
  for (const Named& r : kReductions) {
    const auto o = F::SoftMarginLossFuncOptions().reduction(r.reduction);
    check_case(losses(), std::string("soft_margin_") + r.suffix, {"x", "y"},
               [&](const In& in) { return nn::SoftMarginLoss(o)(in[0], in[1]); });
  }
}

TEST_CASE("golden: binary_cross_entropy_with_logits, plain and with pos_weight and weight") {
  for (const Named& r : kReductions) {
    const auto o = nn::BCEWithLogitsOptions().reduction(r.reduction);
    check_case(losses(), std::string("bce_") + r.suffix, {"x", "y"},
               [&](const In& in) { return F::binary_cross_entropy_with_logits(in[0], in[1], o); });
    check_case(losses(), std::string("bce_pos_weight_weight_") + r.suffix,
               {"x", "y", "pos_weight", "weight"}, [&](const In& in) {
                 const auto ow = nn::BCEWithLogitsOptions(o).pos_weight(in[2]).weight(in[3]);
                 return F::binary_cross_entropy_with_logits(in[0], in[1], ow);
               });
  }
}

TEST_CASE("golden: binary_cross_entropy on probabilities, each reduction, and with a weight") {
  for (const Named& r : kReductions) {
    const auto o = F::BinaryCrossEntropyFuncOptions().reduction(r.reduction);
    check_case(losses(), std::string("bce_probs_") + r.suffix, {"p", "y"},
               [&](const In& in) { return F::binary_cross_entropy(in[0], in[1], o); });
  }
  check_case(losses(), "bce_probs_weight_mean", {"p", "y", "weight"}, [](const In& in) {
    return nn::BCELoss(nn::BCELossOptions().weight(in[2]))(in[0], in[1]);
  });
}
