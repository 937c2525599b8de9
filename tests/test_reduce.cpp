// test_reduce.cpp - max, min, argmax, argmin and var (float build): values against hand
// computation and naive loops, ties, NaN, the parallel paths, and errors; row_all_finite.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <heed/core/cpu.h>
#include <heed/core/elementwise.h>
#include <heed/core/random.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/views.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;
using heed::test::allclose;

namespace {

const real kNaN = std::numeric_limits<real>::quiet_NaN();

std::vector<int64_t> ids(const IndexTensor& t) { return t.vec(); }

}  // namespace

TEST_CASE("max/min over all elements") {
  Tensor x = from_vector({3, -1, 7, 2, 7, -4}, {2, 3});
  Tensor mx = max(x), mn = min(x);
  CHECK(mx.shape() == Shape{});
  CHECK(mx.item() == 7);
  CHECK(mn.item() == -4);
  CHECK(max(scalar_tensor(2.5)).item() == real(2.5));
  CHECK(min(from_vector({-0.5}, {1, 1, 1})).item() == real(-0.5));
}

TEST_CASE("max/min over a dim: values, indices, keepdim") {
  // x = [[3, -1, 7],
  //      [2,  9, -4]]
  Tensor x = from_vector({3, -1, 7, 2, 9, -4}, {2, 3});
  auto [v1, i1] = max(x, 1);
  CHECK(v1.shape() == Shape{2});
  CHECK(v1.to_vector() == std::vector<real>{7, 9});
  CHECK(ids(i1) == std::vector<int64_t>{2, 1});
  CHECK(i1.shape() == Shape{2});
  auto [v0, i0] = max(x, 0);
  CHECK(v0.to_vector() == std::vector<real>{3, 9, 7});
  CHECK(ids(i0) == std::vector<int64_t>{0, 1, 0});
  auto [n1, j1] = min(x, -1, true);
  CHECK(n1.shape() == Shape{2, 1});
  CHECK(j1.shape() == Shape{2, 1});
  CHECK(n1.to_vector() == std::vector<real>{-1, -4});
  CHECK(ids(j1) == std::vector<int64_t>{1, 2});
  auto [n0, j0] = min(x, -2, true);
  CHECK(n0.shape() == Shape{1, 3});
  CHECK(n0.to_vector() == std::vector<real>{2, -1, -4});
  CHECK(ids(j0) == std::vector<int64_t>{1, 0, 1});
  // a scalar over dim 0 is itself, index 0
  auto [vs, is] = max(scalar_tensor(4), 0);
  CHECK(vs.shape() == Shape{});
  CHECK(vs.item() == 4);
  CHECK(ids(is) == std::vector<int64_t>{0});
  // the output of max over a dim records a graph; indices match argmax
  Tensor p = from_vector({1, 2, 3, 4}, {2, 2}).requires_grad_();
  CHECK(max(p, 0).values.requires_grad());
  CHECK_FALSE(max(p.detach(), 0).values.requires_grad());
}

TEST_CASE("argmax/argmin over each dim of a 3-D tensor match a naive loop") {
  manual_seed(31);
  Tensor x = randn({3, 5, 300});  // inner 300 > 256: more than one column chunk
  const real* px = x.data();
  const Shape s = x.shape();
  for (int d = 0; d < 3; ++d) {
    CAPTURE(d);
    IndexTensor am = argmax(x, d), an = argmin(x, d, true);
    auto [mv, mi] = max(x, d);
    Shape kept = s;
    kept[d] = 1;
    CHECK(an.shape() == kept);
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < d; ++i) outer *= s[i];
    for (int i = d + 1; i < 3; ++i) inner *= s[i];
    const int64_t n = s[d];
    bool all_ok = true;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t best = 0, worst = 0;
        for (int64_t k = 1; k < n; ++k) {
          if (px[(o * n + k) * inner + i] > px[(o * n + best) * inner + i]) best = k;
          if (px[(o * n + k) * inner + i] < px[(o * n + worst) * inner + i]) worst = k;
        }
        const int64_t r = o * inner + i;
        all_ok = all_ok && am[r] == best && an[r] == worst && mi[r] == best &&
                 mv.data()[r] == px[(o * n + best) * inner + i];
      }
    CHECK(all_ok);
  }
}

TEST_CASE("ties give the first occurrence; the gradient goes there") {
  Tensor x = from_vector({5, 1, 5, 1, 5, 1}, {2, 3});
  CHECK(ids(argmax(x, 1)) == std::vector<int64_t>{0, 1});
  CHECK(ids(argmin(x, 1)) == std::vector<int64_t>{1, 0});
  CHECK(ids(argmax(x, 0)) == std::vector<int64_t>{0, 1, 0});
  Tensor p = x.detach().requires_grad_();
  max(p).backward();  // heed sends all of it to the first maximum (PyTorch would split it)
  CHECK(p.grad().to_vector() == std::vector<real>{1, 0, 0, 0, 0, 0});
  p.set_grad(Tensor());
  min(p).backward();
  CHECK(p.grad().to_vector() == std::vector<real>{0, 1, 0, 0, 0, 0});
}

TEST_CASE("max over all of a large tensor (parallel blocks) keeps the first occurrence") {
  const int64_t n = 100003;  // several blocks of kGrainElementwise
  Tensor x = arange(real(n)).mul_(real(1e-3));
  x.data()[70001] = 1000;  // the maximum, repeated in a later block
  x.data()[90000] = 1000;
  x.data()[40000] = -5;    // the minimum, twice in one block
  x.data()[40001] = -5;
  Tensor p = x.requires_grad_();
  Tensor m = max(p);
  CHECK(m.item() == 1000);
  m.backward();
  CHECK(p.grad().data()[70001] == 1);
  CHECK(p.grad().data()[90000] == 0);
  CHECK(sum(p.grad()).item() == 1);
  p.set_grad(Tensor());
  min(p).backward();
  CHECK(p.grad().data()[40000] == 1);
  CHECK(p.grad().data()[40001] == 0);
  CHECK(ids(argmax(p.detach().reshape({1, n}), 1)) == std::vector<int64_t>{70001});
}

TEST_CASE("NaN propagates through max and min, with the first NaN's index") {
  Tensor x = from_vector({1, kNaN, 3, kNaN, 2, 0}, {2, 3});
  CHECK(std::isnan(max(x).item()));
  CHECK(std::isnan(min(x).item()));
  auto [v, i] = max(x, 1);
  CHECK(std::isnan(v.at({0})));
  CHECK(std::isnan(v.at({1})));
  CHECK(ids(i) == std::vector<int64_t>{1, 0});
  auto [w, j] = min(x, 0);
  CHECK(std::isnan(w.at({0})));
  CHECK(std::isnan(w.at({1})));
  CHECK(w.at({2}) == 0);
  CHECK(ids(j) == std::vector<int64_t>{1, 0, 1});
  CHECK(ids(argmin(x, 1)) == std::vector<int64_t>{1, 0});
  // a NaN after the best so far still wins; a number after a NaN does not
  CHECK(std::isnan(max(from_vector({1, 9, kNaN}, {3})).item()));
  CHECK(std::isnan(max(from_vector({kNaN, 9, 1}, {3})).item()));
  Tensor big = zeros({70000});
  big.data()[50000] = kNaN;
  big.data()[60000] = 1;
  CHECK(std::isnan(max(big).item()));
}

// var(x, 1) does not compile: 1 converts equally well to `bool unbiased` and to
// `int64_t dim`, so calls over a dim below spell out unbiased.
TEST_CASE("var over all and over a dim against hand computation") {
  Tensor x = from_vector({1, 2, 3, 4}, {4});
  CHECK(var(x).item() == doctest::Approx(5.0 / 3));  // squared deviations sum to 5
  CHECK(var(x, false).item() == doctest::Approx(1.25));
  // m = [[1, 2, 6],
  //      [3, 8, 4]]
  Tensor m = from_vector({1, 2, 6, 3, 8, 4}, {2, 3});
  Tensor v1 = var(m, 1, true);  // rows: mean 3, ss 14 -> 7; mean 5, ss 14 -> 7
  CHECK(v1.shape() == Shape{2});
  CHECK(allclose(v1, from_vector({7, 7}, {2})));
  Tensor v0 = var(m, 0, false, true);  // columns (1,3) (2,8) (6,4): ss/2 = 1, 9, 1
  CHECK(v0.shape() == Shape{1, 3});
  CHECK(allclose(v0, from_vector({1, 9, 1}, {1, 3})));
  CHECK(allclose(var(m, 0, true), from_vector({2, 18, 2}, {3})));
  CHECK(var(m, -1, true, true).shape() == Shape{2, 1});
  CHECK(var(scalar_tensor(3), false).item() == 0);
  CHECK(var(scalar_tensor(3), 0, false).shape() == Shape{});
  // a constant offset does not change the variance (two passes, no cancellation)
  Tensor shifted = from_vector({1e4 + 1, 1e4 + 2, 1e4 + 3, 1e4 + 4}, {4});
  CHECK(var(shifted).item() == doctest::Approx(5.0 / 3).epsilon(1e-4));
}

TEST_CASE("var over a dim of a large tensor matches a naive loop (parallel path)") {
  manual_seed(32);
  Tensor x = randn({40, 30, 70});
  const real* px = x.data();
  for (int d = 0; d < 3; ++d) {
    CAPTURE(d);
    Tensor v = var(x, d, true);
    const Shape s = x.shape();
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < d; ++i) outer *= s[i];
    for (int i = d + 1; i < 3; ++i) inner *= s[i];
    const int64_t n = s[d];
    Tensor want = empty(v.shape());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double mean = 0, ss = 0;
        for (int64_t k = 0; k < n; ++k) mean += px[(o * n + k) * inner + i];
        mean /= double(n);
        for (int64_t k = 0; k < n; ++k) {
          const double dv = px[(o * n + k) * inner + i] - mean;
          ss += dv * dv;
        }
        want.data()[o * inner + i] = real(ss / double(n - 1));
      }
    CHECK(allclose(v, want, 1e-5, 1e-6));
  }
}

TEST_CASE("sum over a dim: row blocks, column chunks and their partials match a naive loop") {
  // (outer, n, inner): n over one block (64 rows) and not a multiple of it, inner over one
  // chunk (1024 columns), several outer; and the one-block path (n <= 64).
  manual_seed(5);
  for (const Shape& s : {Shape{3, 200, 1100}, Shape{2, 64, 70}, Shape{1, 65, 3}, Shape{4, 7, 1030},
                         Shape{1, 130, 2}, Shape{2, 0, 5}}) {
    CAPTURE(s);
    const Tensor x = randn(s);
    Tensor y;
    {
      test::FixedThreads two(2);
      y = sum(x, 1);
    }
    const real* px = x.data();
    std::vector<real> naive;
    for (int64_t o = 0; o < s[0]; ++o)
      for (int64_t i = 0; i < s[2]; ++i) {
        double acc = 0;
        for (int64_t k = 0; k < s[1]; ++k) acc += px[(o * s[1] + k) * s[2] + i];
        naive.push_back(real(acc));
      }
    CHECK(allclose(y, from_vector(naive, {s[0], s[2]}), 1e-5, 1e-5));
    test::FixedThreads one(1);  // the blocks do not depend on the threads: bit for bit
    CHECK(allclose(sum(x, 1), y, 0, 0));
  }
}

TEST_CASE("reduce errors name the op and the shape") {
  CHECK_THROWS_AS(max(zeros({0})), Error);
  CHECK_THROWS_AS(min(zeros({2, 0})), Error);
  CHECK_THROWS_AS(max(zeros({2, 0}), 1), Error);
  CHECK_THROWS_AS(argmin(zeros({0, 3}), 0), Error);
  CHECK_THROWS_AS(argmax(zeros({2, 3}), 2), Error);
  CHECK_THROWS_AS(min(zeros({2, 3}), -3), Error);
  CHECK_THROWS_AS(var(zeros({0})), Error);
  CHECK_THROWS_AS(var(zeros({0}), false), Error);
  CHECK_THROWS_AS(var(ones({1})), Error);           // n - 1 = 0
  CHECK_THROWS_AS(var(ones({3, 1}), 1, true), Error);
  CHECK_THROWS_AS(var(ones({3, 0}), 1, false), Error);
  CHECK_THROWS_AS(var(ones({3, 2}), 2, true), Error);
  CHECK(error_of([] { max(zeros({2, 0})); }) == "max: cannot reduce an empty tensor of shape (2,0)");
  CHECK(error_of([] { argmax(zeros({2, 0}), 1); }) ==
        "argmax: cannot reduce dim 1 of size 0 (shape (2,0))");
  CHECK(error_of([] { var(ones({3, 1}), -1, true); }) ==
        "var: unbiased variance over dim -1 of size 1 (shape (3,1)) divides by n - 1 = 0; "
        "pass unbiased = false");
  CHECK(error_of([] { var(ones({1})); }).rfind("var: unbiased variance of one element (shape (1))", 0) == 0);
  // reducing a non-empty dim of an empty tensor is fine: nothing to reduce, empty result
  auto [v, i] = max(zeros({0, 3}), 1);
  CHECK(v.shape() == Shape{0});
  CHECK(i.numel() == 0);
  CHECK(min(zeros({3, 0}), 0, true).values.shape() == Shape{1, 0});
  CHECK(argmax(zeros({2, 3, 0}), 1).shape() == Shape{2, 0});
  CHECK(var(zeros({3, 0}), 0, true).shape() == Shape{0});
  CHECK(var(zeros({2, 3, 0}), 1, true, true).shape() == Shape{2, 1, 0});
}

TEST_CASE("row_all_finite: the vectorised scan agrees with std::isfinite on every length and position") {
  MESSAGE("row_all_finite at CPU level " << cpu_capability());  // make test runs every level
  const real specials[] = {std::numeric_limits<real>::quiet_NaN(), std::numeric_limits<real>::infinity(),
                           -std::numeric_limits<real>::infinity()};
  const real finite[] = {0, -0.0f, 1, -3.5f, std::numeric_limits<real>::max(), -std::numeric_limits<real>::max(),
                         std::numeric_limits<real>::denorm_min(), std::numeric_limits<real>::min()};
  for (int64_t n = 0; n <= 70; ++n) {
    std::vector<real> x(n);
    for (int64_t i = 0; i < n; ++i) x[i] = finite[i % 8];
    CHECK(row_all_finite(x.data(), n));
    for (int64_t at = 0; at < n; ++at)
      for (real bad : specials) {
        const real keep = x[at];
        x[at] = bad;
        const bool want = std::all_of(x.begin(), x.end(), [](real v) { return std::isfinite(v); });
        CHECK(want == false);
        CHECK(row_all_finite(x.data(), n) == want);
        x[at] = keep;
      }
  }
}
