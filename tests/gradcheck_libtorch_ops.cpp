// gradcheck_libtorch_ops.cpp - finite-difference checks (double build) of the ops libtorch
// programs use by these names: sin, cos, norm (p = 2, 1, 3, inf over dims), mm, bmm, t,
// expand_as, index / index_put with slices, compound assignment in a graph, smooth_l1_loss
// and huber_loss, chunk (with gradgradcheck). Inputs stay away from kinks (|x| at 0, ties of
// the inf norm, the loss's |d| = beta seam is smooth). Also split, split_with_sizes, unbind,
// movedim and swapaxes, each with gradgradcheck.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/mm.h>
#include <heed/autograd/ops/norm.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/smooth_l1_loss.h>
#include <heed/autograd/ops/tensor_index.h>
#include <heed/autograd/ops/trig.h>
#include "helpers.h"

using namespace heed;
using namespace heed::indexing;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

// A leaf of N(0, 1) values pushed `gap` away from 0 (|x| and sign(x) kinks), keeping them
// distinct (a tie for the largest or smallest |x| has no derivative).
Tensor param_nonzero(const Shape& s, double gap = 0.1) {
  Tensor t = randn(s);
  for (int64_t i = 0; i < t.numel(); ++i) {
    real& v = t.data()[i];
    v = v >= 0 ? v + real(gap) : v - real(gap);
  }
  return t.requires_grad_();
}

}  // namespace

TEST_CASE("gradcheck sin and cos, and their composition") {
  manual_seed(900);
  Tensor x = param({3, 4}, 2.0);
  check_grad([](const V& v) { return sin(v[0]); }, {x});
  check_grad([](const V& v) { return cos(v[0]); }, {x});
  check_grad([](const V& v) { return sin(v[0]) * cos(v[0] * 3) + v[0].sin().cos(); }, {x});
}

TEST_CASE("gradcheck norm: p = 2, 1, 3, 0.5, inf, -inf over all, one and two dims, keepdim") {
  manual_seed(901);
  Tensor x = param_nonzero({3, 4, 5});
  const double inf = std::numeric_limits<double>::infinity();
  check_grad([](const V& v) { return norm(v[0]); }, {x});
  for (double p : {2.0, 1.0, 3.0, 0.5, inf, -inf}) {
    CAPTURE(p);
    check_grad([p](const V& v) { return norm(v[0], p); }, {x});
    check_grad([p](const V& v) { return norm(v[0], p, 1); }, {x});
    check_grad([p](const V& v) { return norm(v[0], p, -1, true); }, {x});
    check_grad([p](const V& v) { return norm(v[0], p, {0, 2}); }, {x});
    check_grad([p](const V& v) { return v[0].norm(p, {2, 0}, true) * v[0]; }, {x});
  }
}

TEST_CASE("gradcheck norm at a zero row: the gradient there is 0, as PyTorch's") {
  Tensor x = from_vector({0, 0, 0, 1, -2, 3}, {2, 3}).requires_grad_();
  Tensor n = norm(x, 2, 1);
  n.sum().backward();
  for (int j = 0; j < 3; ++j) CHECK(x.grad().data()[j] == 0);
  CHECK(x.grad().data()[4] == doctest::Approx(-2 / std::sqrt(14.0)));
}

TEST_CASE("gradcheck mm, bmm, t and expand_as") {
  manual_seed(902);
  Tensor a = param({3, 4}), b = param({4, 2});
  check_grad([](const V& v) { return mm(v[0], v[1]); }, {a, b});
  check_grad([](const V& v) { return v[1].t().mm(v[0].t()); }, {a, b});
  Tensor p = param({2, 3, 4}), q = param({2, 4, 5});
  check_grad([](const V& v) { return bmm(v[0], v[1]); }, {p, q});
  Tensor r = param({3, 1});
  check_grad([](const V& v) { return v[0].expand_as(v[1]) * v[1]; }, {r, a});
}

TEST_CASE("gradcheck index and index_put with integers, strided slices, None and Ellipsis") {
  manual_seed(903);
  Tensor x = param({4, 6}), v = param({4, 3}), w = param({3});
  check_grad([](const V& t) { return t[0].index({Slice(), Slice(0, None, 2)}); }, {x});
  check_grad([](const V& t) { return t[0].index({Slice(1, -1), -1}); }, {x});
  check_grad([](const V& t) { return t[0].index({None, Ellipsis, Slice(None, None, 3)}); }, {x});
  // regions that are one block of x: shared views (x.index({1}) is select(0, 1))
  check_grad([](const V& t) { return t[0].index({1}) * t[0].index({Slice(2, 4)}); }, {x});
  check_grad([](const V& t) { return t[0].index({2, Slice(1, 4)}); }, {x});
  check_grad([](const V& t) { return index_put(t[0], {Slice(), Slice(1, None, 2)}, t[1]); }, {x, v});
  check_grad([](const V& t) { return index_put(t[0], {Slice(0, 3), 2}, t[1]) * t[0]; }, {x, w});
  // a value broadcast over the region: its gradient sums the region's
  check_grad([](const V& t) { return index_put(t[0], {Slice(), Slice(0, None, 2)}, t[1]); }, {x, w});
  // a value with extra leading size-1 dims (PyTorch drops them), exact and broadcast
  Tensor v11 = param({1, 1, 4, 3}), w11 = param({1, 1, 3});
  check_grad([](const V& t) { return index_put(t[0], {Slice(), Slice(1, None, 2)}, t[1]) * t[0]; }, {x, v11});
  check_grad([](const V& t) { return index_put(t[0], {Slice(), Slice(0, None, 2)}, t[1]); }, {x, w11});
}

TEST_CASE("gradcheck compound assignment inside a graph and index_put_ on a non-leaf") {
  manual_seed(904);
  Tensor x = param({3, 4}), y = param({3, 4}), s = param({4});
  check_grad([](const V& v) {
    Tensor acc = v[0] * 1;  // a non-leaf: += records and rebinds
    acc += v[1];
    acc -= v[2];
    acc *= v[1];
    acc /= 2.5;
    return acc;
  }, {x, y, s});
  check_grad([](const V& v) {
    Tensor loss = zeros({});  // libtorch's running loss: a plain tensor, then += graph values
    for (int t = 0; t < 3; ++t) loss += (v[0].select(0, t) * v[1].select(0, t)).sum();
    return loss;
  }, {x, y});
  check_grad([](const V& v) {
    Tensor h = v[0] * 2;
    h.index_put_({Slice(), Slice(0, None, 2)}, v[1].index({Slice(), Slice(0, 2)}));
    return h;
  }, {x, y});
}

TEST_CASE("gradcheck smooth_l1_loss and huber_loss, every reduction, beta 0 and delta < 1") {
  manual_seed(905);
  Tensor x = param({4, 5}, 2.0), y = param({4, 5});
  // keep |x - y| away from 0 (the L1 kink, beta = 0) and from the seams at 0.5 and 1
  for (int64_t i = 0; i < x.numel(); ++i) {
    double d = double(x.data()[i] - y.data()[i]);
    for (double seam : {0.0, 0.5, -0.5, 1.0, -1.0})
      if (std::fabs(d - seam) < 0.05) x.data()[i] += real(0.1);
  }
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    check_grad([r](const V& v) { return smooth_l1_loss(v[0], v[1], r); }, {x, y});
    check_grad([r](const V& v) { return smooth_l1_loss(v[0], v[1], r, 0.5); }, {x, y});
    check_grad([r](const V& v) { return smooth_l1_loss(v[0], v[1], r, 0.0); }, {x, y});
    check_grad([r](const V& v) { return huber_loss(v[0], v[1], r); }, {x, y});
    check_grad([r](const V& v) { return huber_loss(v[0], v[1], r, 0.5); }, {x, y});
  }
}

// Second derivatives (autograd/engine/gradcheck.h's gradgradcheck) of the ops above whose backward
// is written in heed ops: sin, cos, norm, index and index_put; mm, bmm, t, expand_as and the
// two losses are composed of ops checked in gradcheck_double_backward.cpp, and are checked
// here too as users call them.
TEST_CASE("gradgradcheck sin, cos, norm, index, index_put, mm, bmm and the smooth L1 losses") {
  manual_seed(905);
  auto check2 = [](const TensorFn& f, const std::vector<Tensor>& in) {
    const GradcheckResult r = gradgradcheck(f, in);
    CHECK_MESSAGE(r.ok, r.message);
  };
  Tensor x = param({3, 4}, 2.0);
  check2([](const V& v) { return sin(v[0]) * cos(v[0] * 3); }, {x});
  Tensor z = param_nonzero({3, 4});
  const double inf = std::numeric_limits<double>::infinity();
  for (double p : {2.0, 1.0, 3.0, inf}) {
    CAPTURE(p);
    check2([p](const V& v) { return norm(v[0], p, 1) * norm(v[0], p); }, {z});
  }
  Tensor a = param({4, 6}), w = param({3});
  check2([](const V& t) { return t[0].index({Slice(), Slice(0, None, 2)}) * t[0].index({Slice(), Slice(1, None, 2)}); }, {a});
  check2([](const V& t) { return t[0].index({1}) * t[0].index({Slice(2, 4)}); }, {a});
  check2([](const V& t) { Tensor y = index_put(t[0], {Slice(0, 3), 2}, t[1]); return y * y; }, {a, w});
  Tensor b = param({6, 2}), p3 = param({2, 3, 4}), q3 = param({2, 4, 2});
  check2([](const V& v) { Tensor m = mm(v[0], v[1]); return mm(m.t(), m); }, {a, b});
  check2([](const V& v) { Tensor m = bmm(v[0], v[1]); return m * m; }, {p3, q3});
  Tensor u = param({3, 4}), t = param({3, 4});
  check2([](const V& v) { return smooth_l1_loss(v[0] * v[0], v[1]); }, {u, t});
  check2([](const V& v) { return huber_loss(v[0] * v[0], v[1]); }, {u, t});
}

TEST_CASE("gradcheck and gradgradcheck chunk: every piece, uneven sizes, a middle dim") {
  manual_seed(910);
  Tensor x = param({3, 5, 2});
  // pieces of 2, 2, 1 along dim 1, each used differently so each gradient is distinct
  const auto pieces = [](const V& v) {
    std::vector<Tensor> p = v[0].chunk(3, 1);
    return p[0] * p[1] + p[2].sum(1, true) * 2;   // (3, 2, 2) * (3, 2, 2) + (3, 1, 2)
  };
  check_grad(pieces, {x});
  check_grad([](const V& v) { return chunk(v[0], 2, -1)[1] * chunk(v[0], 2, -1)[0]; }, {x});
  check_grad([](const V& v) { return v[0].chunk(4)[2]; }, {x});  // 3 rows in 3 pieces of 1
  // double backward: the pieces' products have a non-zero second derivative
  const GradcheckResult r = gradgradcheck(pieces, {x});
  CHECK_MESSAGE(r.ok, r.message);
  const GradcheckResult r2 = gradgradcheck([](const V& v) { return (v[0].chunk(2, 2)[0] * v[0].chunk(2, 2)[1]).tanh(); }, {x});
  CHECK_MESSAGE(r2.ok, r2.message);
}

TEST_CASE("gradcheck and gradgradcheck split, split_with_sizes, unbind, movedim, swapaxes") {
  manual_seed(911);
  Tensor x = param({3, 5, 2});
  // each piece used differently, so that each piece's gradient is distinct
  const std::vector<TensorFn> fns = {
      [](const V& v) { std::vector<Tensor> p = v[0].split(2, 1); return p[0] * p[1] + p[2].sum(1, true) * 2; },
      [](const V& v) { std::vector<Tensor> p = v[0].split(1, 0); return p[0] * p[2] * 3 + p[1]; },
      [](const V& v) { std::vector<Tensor> p = v[0].split({1, 3, 1}, 1); return p[1].sum(1, true) * p[0] * p[2]; },
      [](const V& v) { std::vector<Tensor> p = v[0].unbind(2); return p[0] * p[1] + p[0]; },
      [](const V& v) { std::vector<Tensor> p = v[0].unbind(0); return p[0] * p[1] * p[2]; },
      [](const V& v) { return v[0].movedim(0, 2) * v[0].movedim({0, 1}, {2, 0}); },
      [](const V& v) { return v[0].swapaxes(0, 1) * v[0].swapdims(1, 0); },
  };
  for (size_t i = 0; i < fns.size(); ++i) {
    CAPTURE(i);
    check_grad(fns[i], {x});
    const GradcheckResult r = gradgradcheck(fns[i], {x});
    CHECK_MESSAGE(r.ok, r.message);
  }
}
