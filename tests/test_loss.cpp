// test_loss.cpp - the losses of layers/loss.h in float: values and gradients against
// hand-computed ones, the fused cross_entropy against its composed log_softmax + gather twin
// (cross_entropy_loss_reference), ignore_index and the all-ignored rule, parallel rows,
// errors, the modules.
#include <cmath>
#include <string>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/loss.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/loss.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;
using heed::test::allclose;
using Vec = std::vector<real>;
namespace F = heed::nn::functional;
using nn::Reduction;

static bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

static IndexTensor ids(std::vector<int64_t> v) { return IndexTensor(std::move(v)); }

static const Reduction kReductions[] = {Reduction::None, Reduction::Mean, Reduction::Sum};

// ---------------------------------------------------------------- the composed reference

// heed::cross_entropy_loss_reference (autograd/ops/loss.h): log_softmax over dim 1, gather of
// the target class, a mask for ignored positions, then the reduction. Slow and obviously right.
static Tensor composed_cross_entropy(const Tensor& x, const IndexTensor& target,
                                     const nn::CrossEntropyOptions& o) {
  return cross_entropy_loss_reference(x, target, o.weight(), o.reduction(), o.ignore_index(),
                                      o.label_smoothing());
}

// Value and input gradient of both, for one random upstream gradient.
static void check_fused_matches_composed(const Shape& xs, const IndexTensor& target,
                                         const nn::CrossEntropyOptions& o) {
  Tensor x = randn(xs).requires_grad_();
  Tensor x2 = clone(x.detach()).requires_grad_();
  Tensor fused = F::cross_entropy(x, target, o);
  Tensor ref = composed_cross_entropy(x2, target, o);
  CHECK_MESSAGE(allclose(fused, ref, 1e-5, 1e-6), "fused ", fused, " vs composed ", ref);
  Tensor dy = randn(fused.shape());
  fused.backward(dy);
  ref.backward(dy);
  CHECK_MESSAGE(allclose(x.grad(), x2.grad(), 1e-4, 1e-6), "grad ", x.grad(), " vs ", x2.grad());
}

// ---------------------------------------------------------------- cross_entropy

TEST_CASE("loss: cross_entropy values and gradient by hand") {
  // x = [[1 2 3] [1 1 1]], targets [2 0]
  //   row 0: lse = log(e + e^2 + e^3), loss = lse - 3
  //   row 1: uniform, loss = log 3
  Tensor x = from_vector({1, 2, 3, 1, 1, 1}, {2, 3}).requires_grad_();
  const IndexTensor t = ids({2, 0});
  const double lse0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  const double l0 = lse0 - 3, l1 = std::log(3.0);

  const auto none = nn::CrossEntropyOptions().reduction(Reduction::None);
  CHECK(allclose(F::cross_entropy(x, t, none), from_vector({real(l0), real(l1)}, {2})));
  CHECK(F::cross_entropy(x, t).item() == doctest::Approx((l0 + l1) / 2).epsilon(1e-6));
  const auto sum_o = nn::CrossEntropyOptions().reduction(Reduction::Sum);
  CHECK(F::cross_entropy(x, t, sum_o).item() == doctest::Approx(l0 + l1).epsilon(1e-6));

  // label smoothing 0.1: loss = 0.9 * nll + 0.1/3 * sum_c (lse - x_c)
  const auto ls = nn::CrossEntropyOptions().reduction(Reduction::None).label_smoothing(0.1);
  const double s0 = 0.9 * l0 + 0.1 / 3 * (3 * lse0 - 6), s1 = std::log(3.0);  // uniform row: unchanged
  CHECK(allclose(F::cross_entropy(x, t, ls), from_vector({real(s0), real(s1)}, {2})));

  // mean: dx = (softmax(x) - onehot(y)) / N
  F::cross_entropy(x, t).backward();
  const double p[3] = {std::exp(1 - lse0), std::exp(2 - lse0), std::exp(3 - lse0)};
  const Tensor expected = from_vector({real(p[0] / 2), real(p[1] / 2), real((p[2] - 1) / 2),
                                       real((1.0 / 3 - 1) / 2), real(1.0 / 6), real(1.0 / 6)},
                                      {2, 3});
  CHECK_MESSAGE(allclose(x.grad(), expected), x.grad());
}

TEST_CASE("loss: cross_entropy ignore_index rows are excluded from the mean, with smoothing too") {
  manual_seed(21);
  Tensor x = randn({5, 4}).requires_grad_();
  const IndexTensor t = ids({1, -100, 3, -100, 0});
  for (double eps : {0.0, 0.3}) {
    CAPTURE(eps);
    const auto o = nn::CrossEntropyOptions().label_smoothing(eps);
    Tensor none = F::cross_entropy(x, t, nn::CrossEntropyOptions(o).reduction(Reduction::None));
    CHECK(none.at({1}) == 0);
    CHECK(none.at({3}) == 0);
    Tensor sum_ = F::cross_entropy(x, t, nn::CrossEntropyOptions(o).reduction(Reduction::Sum));
    Tensor mean_ = F::cross_entropy(x, t, o);
    CHECK(sum_.item() == doctest::Approx(none.at({0}) + none.at({2}) + none.at({4})).epsilon(1e-6));
    CHECK(mean_.item() == doctest::Approx(sum_.item() / 3).epsilon(1e-6));  // 3 rows count
    x.set_grad(Tensor());
    mean_.backward();
    for (int64_t c = 0; c < 4; ++c) {
      CHECK(x.grad().at({1, c}) == 0);
      CHECK(x.grad().at({3, c}) == 0);
    }
  }
  // another ignore_index; -100 is then an out-of-range target
  const auto o0 = nn::CrossEntropyOptions().ignore_index(0).reduction(Reduction::None);
  Tensor l = F::cross_entropy(x, ids({1, 0, 3, 0, 0}), o0);
  CHECK(l.at({1}) == 0);
  CHECK(l.at({0}) > 0);
  CHECK(contains(error_of([&] { F::cross_entropy(x, t, o0); }), "target -100"));
}

TEST_CASE("loss: every target ignored gives 0 with zero gradient, not NaN (PyTorch gives NaN)") {
  Tensor x = from_vector({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  const IndexTensor t = ids({-100, -100});
  for (double eps : {0.0, 0.1}) {
    CAPTURE(eps);
    x.set_grad(Tensor());
    Tensor l = F::cross_entropy(x, t, nn::CrossEntropyOptions().label_smoothing(eps));
    CHECK(l.item() == 0);
    l.backward();
    CHECK(x.grad().to_vector() == Vec(6, 0));
  }
  x.set_grad(Tensor());
  Tensor n = F::nll_loss(x, t);
  CHECK(n.item() == 0);
  n.backward();
  CHECK(x.grad().to_vector() == Vec(6, 0));
  // class weights that sum to 0 over kept targets are not "nothing counted": 0/0 is NaN, as
  // PyTorch (tests/test_bad_input_bounds.cpp has the negative weights)
  const auto zero_w = nn::CrossEntropyOptions().weight(from_vector({0, 1, 1}, {3}));
  CHECK(std::isnan(F::cross_entropy(x, ids({0, 0}), zero_w).item()));
}

TEST_CASE("loss: cross_entropy class weights; Mean divides by the targets' summed weights") {
  Tensor x = from_vector({1, 2, 3, 1, 1, 1, 0, 2, -1}, {3, 3});
  const IndexTensor t = ids({2, 0, 1});
  Tensor w = from_vector({0.5, 2, 1}, {3});
  Tensor plain = F::cross_entropy(x, t, nn::CrossEntropyOptions().reduction(Reduction::None));
  Tensor weighted =
      F::cross_entropy(x, t, nn::CrossEntropyOptions().reduction(Reduction::None).weight(w));
  // loss_i = w_y * nll_i (no smoothing): targets 2, 0, 1 weigh 1, 0.5, 2
  CHECK(allclose(weighted, from_vector({plain.at({0}) * 1, plain.at({1}) * real(0.5), plain.at({2}) * 2}, {3})));
  Tensor mean = F::cross_entropy(x, t, nn::CrossEntropyOptions().weight(w));
  CHECK(mean.item() == doctest::Approx(sum(weighted).item() / 3.5).epsilon(1e-6));
}

TEST_CASE("loss: fused cross_entropy == composed log_softmax + gather, value and gradient") {
  manual_seed(22);
  const IndexTensor t2 = ids({3, -100, 0, 2, 2, 1});
  const IndexTensor t3(std::vector<int64_t>{0, 3, -100, 1, 2, 2, -100, 0, 1}, {3, 3});
  Tensor w = from_vector({0.5, 1, 2, 1.5}, {4});
  for (Reduction r : kReductions) {
    for (double eps : {0.0, 0.1}) {
      for (bool weighted : {false, true}) {
        CAPTURE(nn::reduction_name(r));
        CAPTURE(eps);
        CAPTURE(weighted);
        auto o = nn::CrossEntropyOptions().reduction(r).label_smoothing(eps);
        if (weighted) o.weight(w);
        check_fused_matches_composed({6, 4}, t2, o);     // (N, C)
        check_fused_matches_composed({3, 4, 3}, t3, o);  // (N, C, d)
      }
    }
  }
}

TEST_CASE("loss: (B, T, C) logits are flattened to (B*T, C); the unflattened call says how") {
  manual_seed(23);
  Tensor logits = randn({2, 5, 4}).requires_grad_();  // (B, T, C)
  const IndexTensor targets(std::vector<int64_t>{0, 1, 2, 3, 0, 1, 2, 3, -100, 1}, {2, 5});  // (B, T)
  Tensor flat = F::cross_entropy(logits.reshape({-1, 4}), targets.reshape({10}));
  // the same loss with C moved to dim 1: (B, C, T) against (B, T)
  Tensor moved = F::cross_entropy(logits.transpose(1, 2), targets);
  CHECK(flat.item() == doctest::Approx(moved.item()).epsilon(1e-6));
  const std::string e = error_of([&] { F::cross_entropy(logits, targets); });
  CHECK_MESSAGE(contains(e, "cross_entropy: input (2,5,4) and target (2,5) do not match"), e);
  CHECK_MESSAGE(contains(e, "reshape({-1, C})"), e);
}

TEST_CASE("loss: cross_entropy of large logits stays finite and exact") {
  // x * 1000: exp would overflow without the max subtracted
  Tensor x = from_vector({1000, 0, -1000, 500, 500, 0}, {2, 3}).requires_grad_();
  Tensor l = F::cross_entropy(x, ids({1, 0}), nn::CrossEntropyOptions().reduction(Reduction::None));
  CHECK(l.at({0}) == doctest::Approx(1000));
  CHECK(l.at({1}) == doctest::Approx(std::log(2.0)));
  sum(l).backward();
  for (real g : x.grad().to_vector()) CHECK(std::isfinite(g));
}

TEST_CASE("loss: cross_entropy runs rows in parallel; the result does not depend on threads") {
  manual_seed(24);
  const int64_t N = 20000, C = 5;  // 100k logits: above the parallel threshold
  Tensor x = randn({N, C}).requires_grad_();
  std::vector<int64_t> v(N);
  for (int64_t i = 0; i < N; ++i) v[i] = i % 7 == 0 ? -100 : i % C;
  const IndexTensor t(v);
  const auto o = nn::CrossEntropyOptions().label_smoothing(0.1);
  const int threads = get_num_threads();
  set_num_threads(1);
  Tensor l1 = F::cross_entropy(x, t, o);
  l1.backward();
  const Vec g1 = x.grad().to_vector();
  set_num_threads(std::max(threads, 2));
  x.set_grad(Tensor());
  Tensor l2 = F::cross_entropy(x, t, o);
  l2.backward();
  set_num_threads(threads);
  CHECK(l1.item() == l2.item());
  CHECK(g1 == x.grad().to_vector());
}

// ---------------------------------------------------------------- nll, mse, bce

TEST_CASE("loss: nll_loss picks -logp of the target; nll(log_softmax(x)) == cross_entropy(x)") {
  Tensor lp = from_vector({-1, -2, -3, -0.5, -0.25, -4}, {2, 3}).requires_grad_();
  const IndexTensor t = ids({1, 2});
  CHECK(F::nll_loss(lp, t).item() == doctest::Approx((2 + 4) / 2.0));
  CHECK(F::nll_loss(lp, t, nn::NLLOptions().reduction(Reduction::Sum)).item() == doctest::Approx(6));
  CHECK(F::nll_loss(lp, ids({1, -100})).item() == doctest::Approx(2));
  const auto w = nn::NLLOptions().weight(from_vector({1, 3, 0.5}, {3}));
  CHECK(F::nll_loss(lp, t, w).item() == doctest::Approx((3 * 2 + 0.5 * 4) / 3.5));
  F::nll_loss(lp, t, nn::NLLOptions().reduction(Reduction::Sum)).backward();
  CHECK(lp.grad().to_vector() == Vec{0, -1, 0, 0, 0, -1});

  manual_seed(25);
  Tensor x = randn({4, 5});
  const IndexTensor y = ids({4, 0, -100, 2});
  for (Reduction r : kReductions) {
    CAPTURE(nn::reduction_name(r));
    CHECK(allclose(F::nll_loss(log_softmax(x, 1), y, nn::NLLOptions().reduction(r)),
                   F::cross_entropy(x, y, nn::CrossEntropyOptions().reduction(r))));
  }
}

TEST_CASE("loss: mse_loss values and gradients into input and target") {
  Tensor x = from_vector({1, 2, 3, 4}, {2, 2}).requires_grad_();
  Tensor y = from_vector({1, 0, 5, 1}, {2, 2}).requires_grad_();
  // squared errors 0, 4, 4, 9
  CHECK(F::mse_loss(x, y).item() == doctest::Approx(17 / 4.0));
  CHECK(F::mse_loss(x, y, nn::MSEOptions().reduction(Reduction::Sum)).item() == doctest::Approx(17));
  CHECK(F::mse_loss(x, y, nn::MSEOptions().reduction(Reduction::None)).to_vector() == Vec{0, 4, 4, 9});
  F::mse_loss(x, y).backward();  // dx = 2 (x - y) / 4
  CHECK(x.grad().to_vector() == Vec{0, 1, -1, 1.5});
  CHECK(y.grad().to_vector() == Vec{0, -1, 1, -1.5});
}

TEST_CASE("loss: binary_cross_entropy_with_logits values, pos_weight, extremes, gradient") {
  // loss = max(x, 0) - x y + log(1 + exp(-|x|)), by hand
  const double xs[3] = {0.5, -1.0, 2.0}, ys[3] = {1.0, 0.0, 0.25};
  Tensor x = from_vector({0.5, -1, 2}, {1, 3}).requires_grad_();
  Tensor y = from_vector({1, 0, 0.25}, {1, 3});
  Vec expected(3), expected_pw(3), expected_grad(3);
  const double pw[3] = {2, 3, 0.5};
  for (int i = 0; i < 3; ++i) {
    const double sp = std::log1p(std::exp(-xs[i]));  // softplus(-x)
    expected[i] = real(std::max(xs[i], 0.0) - xs[i] * ys[i] + std::log1p(std::exp(-std::fabs(xs[i]))));
    expected_pw[i] = real((1 - ys[i]) * xs[i] + (1 + (pw[i] - 1) * ys[i]) * sp);
    expected_grad[i] = real(1 / (1 + std::exp(-xs[i])) - ys[i]);  // sigmoid(x) - y (Sum)
  }
  const auto none = nn::BCEWithLogitsOptions().reduction(Reduction::None);
  CHECK(allclose(F::binary_cross_entropy_with_logits(x, y, none), from_vector(expected, {1, 3})));
  const auto with_pw = nn::BCEWithLogitsOptions(none).pos_weight(from_vector({2, 3, 0.5}, {3}));
  CHECK(allclose(F::binary_cross_entropy_with_logits(x, y, with_pw), from_vector(expected_pw, {1, 3})));
  F::binary_cross_entropy_with_logits(x, y, nn::BCEWithLogitsOptions().reduction(Reduction::Sum)).backward();
  CHECK(allclose(x.grad(), from_vector(expected_grad, {1, 3})));

  // |x| = 100: exp(100) would overflow float; the stable form gives 0 and 100 exactly
  Tensor big = from_vector({100, -100, 100, -100}, {4}).requires_grad_();
  Tensor l = F::binary_cross_entropy_with_logits(big, from_vector({1, 0, 0, 1}, {4}), none);
  CHECK(allclose(l, from_vector({0, 0, 100, 100}, {4})));
  sum(l).backward();
  CHECK(allclose(big.grad(), from_vector({0, 0, 1, -1}, {4})));  // sigmoid(x) - y
}

TEST_CASE("loss: soft_margin_loss values, past float's e^x, the module and its repr") {
  // log(1 + e^-1), log(1 + e^2) by hand; -y x = 100 and -100, where e^(-y x) is inf or 0 in float
  Tensor x = from_vector({1, 2, -100, 100}, {4}).requires_grad_();
  Tensor y = from_vector({1, -1, 1, 1}, {4});
  Tensor l = F::soft_margin_loss(x, y, F::SoftMarginLossFuncOptions().reduction(kNone));
  CHECK(l.at({0}) == doctest::Approx(std::log1p(std::exp(-1.0))));
  CHECK(l.at({1}) == doctest::Approx(std::log1p(std::exp(2.0))));
  CHECK(l.at({2}) == 100);  // PyTorch's log1p(exp(100)) is inf in float here
  CHECK(std::fabs(l.at({3})) < 1e-40);  // e^-100
  Tensor m = nn::SoftMarginLoss()(x, y);
  CHECK(m.item() == doctest::Approx((l.at({0}) + l.at({1}) + 100) / 4));
  m.backward();
  CHECK(x.grad().at({2}) == doctest::Approx(-0.25));  // -y sigmoid(-y x) / 4, sigmoid(100) = 1
  CHECK(std::fabs(x.grad().at({3})) < 1e-40);
  CHECK(nn::SoftMarginLoss()->repr() == "SoftMarginLoss()");
  CHECK(nn::SoftMarginLoss(nn::SoftMarginLossOptions().reduction(kSum))->repr() == "SoftMarginLoss(reduction='sum')");
  const std::string e = heed::test::error_of([] { F::soft_margin_loss(zeros({2, 3}), zeros({3, 2})); });
  CHECK_MESSAGE(e.find("soft_margin_loss: input (2,3) and target (3,2) do not match") == 0, e);
}

TEST_CASE("loss: binary_cross_entropy on probabilities: values, the -100 clamp at 0 and 1, errors") {
  // -(y log p + (1 - y) log(1 - p)), by hand
  Tensor p = from_vector({0.25, 0.5, 0.9}, {1, 3}).requires_grad_();
  Tensor y = from_vector({1, 0, 0.5}, {1, 3});
  const Vec expected{real(-std::log(0.25)), real(-std::log(0.5)),
                     real(-(0.5 * std::log(0.9) + 0.5 * std::log(0.1)))};
  const auto none = F::BinaryCrossEntropyFuncOptions().reduction(kNone);
  CHECK(allclose(F::binary_cross_entropy(p, y, none), from_vector(expected, {1, 3})));
  nn::BCELoss bce(nn::BCELossOptions().reduction(kSum));
  CHECK(bce->repr() == "BCELoss(reduction='sum')");
  CHECK(nn::BCELoss()->repr() == "BCELoss()");
  bce(p, y).backward();  // (p - y) / ((1 - p) p)
  CHECK(allclose(p.grad(), from_vector({real(-0.75 / 0.1875), real(0.5 / 0.25), real(0.4 / 0.09)}, {1, 3})));
  CHECK(kMean == Reduction::Mean);

  // p = 0 or 1 exactly: each log is clamped at -100 and the gradient stays finite (PyTorch's)
  Tensor edge = from_vector({0, 1, 0, 1}, {4}).requires_grad_();
  Tensor l = F::binary_cross_entropy(edge, from_vector({1, 0, 0, 1}, {4}), none);
  CHECK(allclose(l, from_vector({100, 100, 0, 0}, {4})));
  sum(l).backward();
  CHECK(allclose(edge.grad(), from_vector({real(-1e12), real(1e12), 0, 0}, {4})));

  CHECK(error_of([&] { F::binary_cross_entropy(from_vector({0.5, 1.5}, {2}), zeros({2})); }) ==
        "binary_cross_entropy: all elements of input should be between 0 and 1, got 1.5 at element 1");
  CHECK(contains(error_of([&] { F::binary_cross_entropy(full({1}, NAN), zeros({1})); }),
                 "should be between 0 and 1, got nan"));
}

// ---------------------------------------------------------------- errors

TEST_CASE("loss: bad shapes, targets and options are heed::Errors naming the loss") {
  Tensor x = zeros({4, 3});
  CHECK(error_of([&] { F::cross_entropy(x, ids({0, 1, 2, 0, 1})); }) ==
        "cross_entropy: input (4,3) and target (5) do not match (expected target (4): the "
        "input's shape without its class dim 1)");
  const std::string range = error_of([&] { F::cross_entropy(x, ids({0, 1, 3, 0})); });
  CHECK_MESSAGE(contains(range, "cross_entropy: target 3 at position 2 is out of range for C = 3"), range);
  CHECK(contains(error_of([&] { F::cross_entropy(x, ids({0, -1, 1, 0})); }), "target -1"));
  CHECK(contains(error_of([&] { F::cross_entropy(scalar_tensor(1), IndexTensor()); }),
                 "cross_entropy: input must be"));
  CHECK(contains(error_of([&] {
                   F::cross_entropy(x, ids({0, 1, 2, 0}), nn::CrossEntropyOptions().label_smoothing(1.5));
                 }),
                 "cross_entropy: label_smoothing must be in [0, 1], got 1.5"));
  CHECK(contains(error_of([&] {
                   F::cross_entropy(x, ids({0, 1, 2, 0}), nn::CrossEntropyOptions().weight(ones({4})));
                 }),
                 "cross_entropy: weight (4) must have one entry per class, (3)"));
  CHECK(contains(error_of([&] { F::nll_loss(x, ids({0, 1, 2})); }),
                 "nll_loss: input (4,3) and target (3) do not match"));
  CHECK(contains(error_of([&] { F::nll_loss(x, ids({0, 1, 2, 7})); }), "nll_loss: target 7"));
  CHECK(error_of([&] { F::mse_loss(x, zeros({4})); }) ==
        "mse_loss: input (4,3) and target (4) do not match");
  CHECK(error_of([&] { F::binary_cross_entropy_with_logits(x, zeros({3, 4})); }) ==
        "binary_cross_entropy_with_logits: input (4,3) and target (3,4) do not match");
  CHECK(contains(error_of([&] {
                   F::binary_cross_entropy_with_logits(
                       x, x, nn::BCEWithLogitsOptions().pos_weight(ones({4})));
                 }),
                 "binary_cross_entropy_with_logits"));
  CHECK(contains(error_of([&] {
                   F::binary_cross_entropy_with_logits(
                       x, x, nn::BCEWithLogitsOptions().weight(ones({2, 4, 3})));
                 }),
                 "binary_cross_entropy_with_logits: weight (2,4,3) does not broadcast to input (4,3)"));
}

// ---------------------------------------------------------------- modules

TEST_CASE("loss modules: forward equals the function, repr, buffers, options") {
  manual_seed(26);
  Tensor x = randn({3, 4});
  const IndexTensor t = ids({3, 0, -100});
  auto ce = nn::CrossEntropyLoss(
      nn::CrossEntropyOptions().ignore_index(-100).label_smoothing(0.1).reduction(Reduction::Mean));
  CHECK(ce->forward(x, t).item() ==
        F::cross_entropy(x, t, nn::CrossEntropyOptions().label_smoothing(0.1)).item());
  CHECK(ce->repr() == "CrossEntropyLoss(label_smoothing=0.1)");
  CHECK(ce->options.label_smoothing() == 0.1);
  CHECK(nn::CrossEntropyLoss()->repr() == "CrossEntropyLoss()");
  CHECK(nn::CrossEntropyLoss(nn::CrossEntropyLossOptions()  // the libtorch spelling
                                 .weight(ones({4}))
                                 .ignore_index(0)
                                 .reduction(Reduction::Sum))
            ->repr() == "CrossEntropyLoss(weight=(4,), ignore_index=0, reduction='sum')");

  nn::NLLLoss nll(nn::NLLOptions().weight(ones({4})));
  CHECK(nll->repr() == "NLLLoss(weight=(4,))");
  CHECK(nll->named_buffers().size() == 1);
  CHECK(nll->named_buffers()[0].first == "weight");
  CHECK(nll->parameters().empty());
  CHECK(nll->forward(log_softmax(x, 1), t).item() == F::nll_loss(log_softmax(x, 1), t).item());

  nn::MSELoss mse(nn::MSEOptions().reduction(Reduction::None));
  CHECK(mse->repr() == "MSELoss(reduction='none')");
  CHECK(mse->forward(x, x).to_vector() == Vec(12, 0));
  CHECK(nn::MSELoss()->repr() == "MSELoss()");

  nn::BCEWithLogitsLoss bce(nn::BCEWithLogitsLossOptions().pos_weight(ones({4}) * 2));
  CHECK(bce->repr() == "BCEWithLogitsLoss(pos_weight=(4,))");
  CHECK(bce->named_buffers()[0].first == "pos_weight");
  Tensor y = rand({3, 4});
  CHECK(bce->forward(x, y).item() ==
        F::binary_cross_entropy_with_logits(x, y, bce->options).item());
}
