// gradcheck_loss.cpp - finite-difference checks (double build) of every loss in
// layers/loss.h, for each reduction: cross_entropy with ignored positions, label smoothing,
// class weights and the (N, C, d...) layout; nll_loss; mse_loss; bce with logits and on
// probabilities.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/loss.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/loss.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;
namespace F = heed::nn::functional;
using nn::Reduction;

static const Reduction kReductions[] = {Reduction::None, Reduction::Mean, Reduction::Sum};

TEST_CASE("gradcheck cross_entropy (N, C): reductions x ignore_index x label_smoothing x weight") {
  manual_seed(11);
  Tensor x = param({5, 4}, 2.0);
  const IndexTensor plain(std::vector<int64_t>{3, 0, 1, 2, 1});
  const IndexTensor ignored(std::vector<int64_t>{3, -100, 1, 2, -100});  // rows 1 and 4 ignored
  const IndexTensor custom(std::vector<int64_t>{3, 7, 7, 2, 0});         // ignore_index 7
  Tensor w = from_vector({0.5, 2.0, 1.0, 1.5}, {4});
  for (Reduction r : kReductions) {
    for (double eps : {0.0, 0.1, 1.0}) {
      for (bool weighted : {false, true}) {
        CAPTURE(nn::reduction_name(r));
        CAPTURE(eps);
        CAPTURE(weighted);
        nn::CrossEntropyOptions o = nn::CrossEntropyOptions().reduction(r).label_smoothing(eps);
        if (weighted) o.weight(w);
        check_grad([&](const V& v) { return F::cross_entropy(v[0], plain, o); }, {x});
        check_grad([&](const V& v) { return F::cross_entropy(v[0], ignored, o); }, {x});
        nn::CrossEntropyOptions o7 = o;
        o7.ignore_index(7);
        check_grad([&](const V& v) { return F::cross_entropy(v[0], custom, o7); }, {x});
      }
    }
  }
}

TEST_CASE("gradcheck cross_entropy (N, C, d) and (N, C, d1, d2), class dim 1") {
  manual_seed(12);
  Tensor x3 = param({2, 3, 4});  // (N, C, d)
  const IndexTensor t3(std::vector<int64_t>{0, 2, -100, 1, 1, 1, 0, -100}, {2, 4});
  Tensor x4 = param({2, 3, 2, 2});  // (N, C, d1, d2)
  const IndexTensor t4(std::vector<int64_t>{0, 2, 1, 1, -100, 2, 0, 1}, {2, 2, 2});
  Tensor w = from_vector({1.0, 0.25, 3.0}, {3});
  for (Reduction r : kReductions) {
    CAPTURE(nn::reduction_name(r));
    const auto o = nn::CrossEntropyOptions().reduction(r).label_smoothing(0.2).weight(w);
    check_grad([&](const V& v) { return F::cross_entropy(v[0], t3, o); }, {x3});
    check_grad([&](const V& v) { return F::cross_entropy(v[0], t4, o); }, {x4});
    const auto plain = nn::CrossEntropyOptions().reduction(r);
    check_grad([&](const V& v) { return F::cross_entropy(v[0], t3, plain); }, {x3});
  }
}

TEST_CASE("gradcheck cross_entropy: one sample (C) with a 0-D target") {
  manual_seed(13);
  Tensor x = param({5});
  const IndexTensor t(std::vector<int64_t>{3}, Shape{});
  for (Reduction r : kReductions) {
    CAPTURE(nn::reduction_name(r));
    const auto o = nn::CrossEntropyOptions().reduction(r).label_smoothing(0.05);
    check_grad([&](const V& v) { return F::cross_entropy(v[0], t, o); }, {x});
  }
}

TEST_CASE("gradcheck nll_loss: reductions, ignore_index, weight, (N, C) and (N, C, d)") {
  manual_seed(14);
  Tensor x = param({4, 3});
  const IndexTensor t(std::vector<int64_t>{2, -100, 0, 1});
  Tensor x3 = param({2, 3, 3});
  const IndexTensor t3(std::vector<int64_t>{0, 2, 1, -100, 1, 0}, {2, 3});
  Tensor w = from_vector({2.0, 0.5, 1.0}, {3});
  for (Reduction r : kReductions) {
    for (bool weighted : {false, true}) {
      CAPTURE(nn::reduction_name(r));
      CAPTURE(weighted);
      nn::NLLOptions o = nn::NLLOptions().reduction(r);
      if (weighted) o.weight(w);
      check_grad([&](const V& v) { return F::nll_loss(v[0], t, o); }, {x});
      check_grad([&](const V& v) { return F::nll_loss(v[0], t3, o); }, {x3});
    }
  }
}

TEST_CASE("gradcheck mse_loss: reductions, gradient into input and target") {
  manual_seed(15);
  Tensor x = param({3, 4}), y = param({3, 4});
  for (Reduction r : kReductions) {
    CAPTURE(nn::reduction_name(r));
    const auto o = nn::MSEOptions().reduction(r);
    check_grad([&](const V& v) { return F::mse_loss(v[0], v[1], o); }, {x, y});
  }
}

TEST_CASE("gradcheck binary_cross_entropy_with_logits: reductions, pos_weight, weight, target") {
  manual_seed(16);
  Tensor x = param({4, 3}, 3.0);
  Tensor y = rand({4, 3}).requires_grad_();  // soft targets in [0, 1)
  Tensor pw = from_vector({2.0, 0.5, 1.0}, {3});        // per class, broadcast over rows
  Tensor w = from_vector({1.0, 0.0, 2.0, 0.5}, {4, 1});  // per row
  for (Reduction r : kReductions) {
    CAPTURE(nn::reduction_name(r));
    const auto plain = nn::BCEWithLogitsOptions().reduction(r);
    check_grad([&](const V& v) { return F::binary_cross_entropy_with_logits(v[0], v[1], plain); },
               {x, y});
    const auto both = nn::BCEWithLogitsOptions().reduction(r).pos_weight(pw).weight(w);
    check_grad([&](const V& v) { return F::binary_cross_entropy_with_logits(v[0], v[1], both); },
               {x, y});
  }
}

TEST_CASE("gradcheck soft_margin_loss: reductions, +-1 targets, and a target that requires grad") {
  manual_seed(19);
  Tensor x = param({4, 3}, 3.0);
  Tensor sign = from_vector({1, -1, -1, 1, 1, 1, -1, 1, -1, -1, 1, -1}, {4, 3});
  Tensor y = param({4, 3});  // any real target is differentiable here (PyTorch's is not)
  for (Reduction r : kReductions) {
    CAPTURE(nn::reduction_name(r));
    const auto o = F::SoftMarginLossFuncOptions().reduction(r);
    check_grad([&](const V& v) { return F::soft_margin_loss(v[0], sign, o); }, {x});
    check_grad([&](const V& v) { return F::soft_margin_loss(v[0], v[1], o); }, {x, y});
  }
}

TEST_CASE("gradcheck binary_cross_entropy on probabilities: reductions, weight, target") {
  manual_seed(18);
  Tensor p = (rand({4, 3}) * real(0.9) + real(0.05)).detach().requires_grad_();  // inside (0, 1)
  Tensor y = rand({4, 3}).requires_grad_();                                        // soft targets
  Tensor w = from_vector({1.0, 0.0, 2.0, 0.5}, {4, 1});                            // per row
  for (Reduction r : kReductions) {
    CAPTURE(nn::reduction_name(r));
    const auto plain = F::BinaryCrossEntropyFuncOptions().reduction(r);
    check_grad([&](const V& v) { return F::binary_cross_entropy(v[0], v[1], plain); }, {p, y});
    const auto weighted = nn::BCELossOptions().reduction(r).weight(w);
    check_grad([&](const V& v) { return F::binary_cross_entropy(v[0], v[1], weighted); }, {p, y});
  }
  Tensor x = param({4, 3}, 2.0);  // through a sigmoid, as a GAN's discriminator
  check_grad([&](const V& v) { return nn::BCELoss()->forward(sigmoid(v[0]), ones({4, 3})); }, {x});
}

TEST_CASE("gradcheck losses composed with other ops and through the modules") {
  manual_seed(17);
  Tensor x = param({3, 4}), W = param({4, 5});
  const IndexTensor t(std::vector<int64_t>{4, 0, -100});
  auto ce = nn::CrossEntropyLoss(nn::CrossEntropyOptions().label_smoothing(0.1));
  check_grad([&](const V& v) { return ce->forward(matmul(v[0], v[1]), t); }, {x, W});
  auto mse = nn::MSELoss(nn::MSEOptions().reduction(Reduction::Sum));
  check_grad([&](const V& v) { return mse->forward(tanh(v[0]), v[0] * 0.5); }, {x});
}
