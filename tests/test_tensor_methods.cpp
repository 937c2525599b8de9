// test_tensor_methods.cpp - the op methods of Tensor (x.sum(1), x.softmax(-1), ...) are the
// free functions (autograd/ops/tensor_methods.cpp calls them): every method gives exactly the
// free function's values and gradient. And heed::select, heed::topk.
#include <sys/select.h>  // POSIX select(): heed::select must still be the one chosen

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/compare.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/topk.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/ops/views.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;

namespace {

// Same shape and bitwise the same values (NaN equal to NaN).
bool same(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const real x = a.data()[i], y = b.data()[i];
    if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
  }
  return true;
}

bool same(const IndexTensor& a, const IndexTensor& b) { return a.shape() == b.shape() && a.vec() == b.vec(); }

// f(x) for a fresh leaf copy of x: the result and the gradient of sum(result * w).
struct ValueGrad {
  Tensor value, grad;
};
template <class F>
ValueGrad run(const Tensor& x, const F& f) {
  Tensor leaf = x.detach().clone().requires_grad_();
  const Tensor y = f(leaf);
  sum(y * (arange(real(y.numel())).reshape(y.shape()) + 1)).backward();  // distinct weights
  return {y, leaf.grad()};
}

// Method and free function agree in value and gradient.
template <class M, class F>
void check_same(const char* name, const Tensor& x, const M& method, const F& free) {
  CAPTURE(name);
  const ValueGrad a = run(x, method), b = run(x, free);
  CHECK(same(a.value, b.value));
  CHECK(same(a.grad, b.grad));
}

}  // namespace

TEST_CASE("Tensor methods equal the free functions, values and gradients") {
  manual_seed(610);
  const Tensor x = randn({2, 3, 4});
  const Tensor pos = rand({2, 3, 4}) + 0.5;  // for log, sqrt, pow
  const Tensor m = randn({4, 5});
  check_same("sum()", x, [](const Tensor& t) { return t.sum(); }, [](const Tensor& t) { return sum(t); });
  check_same("sum(1, true)", x, [](const Tensor& t) { return t.sum(1, true); },
             [](const Tensor& t) { return sum(t, 1, true); });
  check_same("mean()", x, [](const Tensor& t) { return t.mean(); }, [](const Tensor& t) { return mean(t); });
  check_same("mean(-1)", x, [](const Tensor& t) { return t.mean(-1); }, [](const Tensor& t) { return mean(t, -1); });
  check_same("max()", x, [](const Tensor& t) { return t.max(); }, [](const Tensor& t) { return max(t); });
  check_same("min()", x, [](const Tensor& t) { return t.min(); }, [](const Tensor& t) { return min(t); });
  check_same("max(1).values", x, [](const Tensor& t) { return t.max(1).values; },
             [](const Tensor& t) { return max(t, 1).values; });
  check_same("min(2, true).values", x, [](const Tensor& t) { return t.min(2, true).values; },
             [](const Tensor& t) { return min(t, 2, true).values; });
  check_same("topk(2, 1).values", x, [](const Tensor& t) { return t.topk(2, 1).values; },
             [](const Tensor& t) { return topk(t, 2, 1).values; });
  check_same("softmax(-1)", x, [](const Tensor& t) { return t.softmax(-1); },
             [](const Tensor& t) { return softmax(t, -1); });
  check_same("log_softmax(1)", x, [](const Tensor& t) { return t.log_softmax(1); },
             [](const Tensor& t) { return log_softmax(t, 1); });
  check_same("matmul", x, [&m](const Tensor& t) { return t.matmul(m); },
             [&m](const Tensor& t) { return matmul(t, m); });
  check_same("select(1, -1)", x, [](const Tensor& t) { return t.select(1, -1); },
             [](const Tensor& t) { return select(t, 1, -1); });
  check_same("narrow(2, 1, 2)", x, [](const Tensor& t) { return t.narrow(2, 1, 2); },
             [](const Tensor& t) { return narrow(t, 2, 1, 2); });
  check_same("flatten(1)", x, [](const Tensor& t) { return t.flatten(1); },
             [](const Tensor& t) { return flatten(t, 1); });
  check_same("exp", x, [](const Tensor& t) { return t.exp(); }, [](const Tensor& t) { return exp(t); });
  check_same("log", pos, [](const Tensor& t) { return t.log(); }, [](const Tensor& t) { return log(t); });
  check_same("sqrt", pos, [](const Tensor& t) { return t.sqrt(); }, [](const Tensor& t) { return sqrt(t); });
  check_same("tanh", x, [](const Tensor& t) { return t.tanh(); }, [](const Tensor& t) { return tanh(t); });
  check_same("sigmoid", x, [](const Tensor& t) { return t.sigmoid(); }, [](const Tensor& t) { return sigmoid(t); });
  check_same("relu", x, [](const Tensor& t) { return t.relu(); }, [](const Tensor& t) { return relu(t); });
  check_same("abs", x, [](const Tensor& t) { return t.abs(); }, [](const Tensor& t) { return abs(t); });
  check_same("neg", x, [](const Tensor& t) { return t.neg(); }, [](const Tensor& t) { return neg(t); });
  check_same("pow(1.5)", pos, [](const Tensor& t) { return t.pow(1.5); }, [](const Tensor& t) { return pow(t, 1.5); });
  check_same("clone", x, [](const Tensor& t) { return t.clone(); }, [](const Tensor& t) { return clone(t); });

  // the index-valued ones
  CHECK(same(x.argmax(1), argmax(x, 1)));
  CHECK(same(x.argmin(-1, true), argmin(x, -1, true)));
  CHECK(same(x.max(2).indices, max(x, 2).indices));
  CHECK(same(x.min(0).indices, min(x, 0).indices));
  CHECK(same(x.topk(3, -1, false).indices, topk(x, 3, -1, false).indices));
  // contiguous() is the tensor itself (every heed tensor is contiguous)
  CHECK(x.transpose(0, 1).contiguous().data() != nullptr);
  CHECK(x.contiguous().impl() == x.impl());
}

TEST_CASE("select: values, negative index, gradient, errors; select(x, 1, t) is heed's, not POSIX's") {
  const Tensor x = arange(24).reshape({2, 3, 4});
  const Tensor s = select(x, 1, 2);  // unqualified, <sys/select.h> included: x[:, 2]
  CHECK(s.shape() == Shape{2, 4});
  CHECK(s.to_vector() == std::vector<real>{8, 9, 10, 11, 20, 21, 22, 23});
  CHECK(same(select(x, 1, -1), s));
  CHECK(select(x, 0, 1).at({0, 0}) == 12);
  CHECK(select(x, -1, 0).to_vector() == std::vector<real>{0, 4, 8, 12, 16, 20});
  CHECK(select(arange(5), 0, 3).shape() == Shape{});
  CHECK(select(arange(5), 0, 3).item() == 3);

  Tensor leaf = zeros({2, 3}).requires_grad_();
  sum(select(leaf, 1, 1) * from_vector({5, 7}, {2})).backward();
  CHECK(leaf.grad().to_vector() == std::vector<real>{0, 5, 0, 0, 7, 0});

  CHECK(error_of([&] { select(x, 1, 3); }) ==
        "select: index 3 is out of range for dim 1 of shape (2,3,4) (size 3)");
  CHECK(error_of([&] { select(x, 1, -4); }).rfind("select: index -4 is out of range", 0) == 0);
  CHECK(error_of([&] { select(x, 3, 0); }).rfind("select:", 0) == 0);
  CHECK(error_of([&] { select(scalar_tensor(1), 0, 0); }) == "select: cannot select from a 0-dim tensor");
}

TEST_CASE("topk: against a sorted reference, each dim, largest and smallest") {
  manual_seed(611);
  const Tensor x = randn({3, 7, 5});
  for (int64_t dim : {0, 1, 2, -1}) {
    const int d = dim < 0 ? int(dim + 3) : int(dim);
    const int64_t n = x.size(d);
    for (bool largest : {true, false}) {
      for (int64_t k : {int64_t{0}, int64_t{1}, n / 2 + 1, n}) {
        CAPTURE(dim); CAPTURE(largest); CAPTURE(k);
        const ValuesIndices t = topk(x, k, dim, largest);
        Shape want = x.shape();
        want[d] = k;
        REQUIRE(t.values.shape() == want);
        REQUIRE(t.indices.shape() == want);
        // the reference: each line's values sorted (std::sort), the first k
        const int64_t inner = d == 2 ? 1 : d == 1 ? 5 : 35, outer = x.numel() / (n * inner);
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            std::vector<real> line(n);
            for (int64_t j = 0; j < n; ++j) line[j] = x.data()[(o * n + j) * inner + i];
            std::vector<real> ref = line;
            if (largest) std::sort(ref.begin(), ref.end(), std::greater<real>());
            else std::sort(ref.begin(), ref.end());
            for (int64_t j = 0; j < k; ++j) {
              const int64_t at = (o * k + j) * inner + i;
              CHECK(t.values.data()[at] == ref[j]);
              CHECK(line[t.indices[at]] == ref[j]);  // the index points at that value
            }
          }
      }
    }
  }
}

TEST_CASE("topk: ties keep the lower index first, NaN ranks highest, gradient scatters back, errors") {
  const Tensor x = from_vector({1, 3, 3, 0, 3}, {5});
  const ValuesIndices t = topk(x, 3);
  CHECK(t.values.to_vector() == std::vector<real>{3, 3, 3});
  CHECK(t.indices.vec() == std::vector<int64_t>{1, 2, 4});
  CHECK(topk(x, 2, 0, false).indices.vec() == std::vector<int64_t>{3, 0});

  const real nan = std::numeric_limits<real>::quiet_NaN();
  const Tensor xn = from_vector({1, nan, 2}, {3});
  CHECK(topk(xn, 1).indices.vec() == std::vector<int64_t>{1});       // as torch.topk
  CHECK(topk(xn, 2, 0, false).indices.vec() == std::vector<int64_t>{0, 2});

  // d values / d x: 1 at the chosen positions (times the upstream weights), 0 elsewhere
  Tensor leaf = from_vector({0.5, -1, 2, 4, 1, 3}, {2, 3}).requires_grad_();
  const ValuesIndices lt = leaf.topk(2);  // rows: {0.5, -1, 2} -> 2, 0.5; {4, 1, 3} -> 4, 3
  CHECK(lt.indices.vec() == std::vector<int64_t>{2, 0, 0, 2});
  sum(lt.values * from_vector({10, 20, 30, 40}, {2, 2})).backward();
  CHECK(leaf.grad().to_vector() == std::vector<real>{20, 0, 10, 30, 0, 40});

  CHECK(error_of([&] { topk(x, 6); }) == "topk: k 6 is out of range for dim -1 of shape (5) (size 5)");
  CHECK(error_of([&] { topk(x, -1); }).rfind("topk: k -1 is out of range", 0) == 0);
  CHECK(error_of([&] { topk(x, 1, 1); }).rfind("topk:", 0) == 0);
  CHECK(error_of([&] { topk(scalar_tensor(1), 1); }) == "topk: cannot take the top k of a 0-dim tensor");
}

TEST_CASE("expand: -1 keeps a dim's size, as PyTorch's expand") {
  Tensor x = from_vector({1, 2, 3}, {3, 1}).requires_grad_();
  const Tensor y = x.expand({2, -1, 4});  // (3, 1) -> (2, 3, 4)
  CHECK(y.shape() == Shape{2, 3, 4});
  CHECK(same(y, x.detach().expand({2, 3, 4})));
  CHECK(same(x.expand({-1, 1}), x));
  CHECK(same(x.expand({-1, -1}), x));
  y.sum().backward();
  CHECK(same(x.grad(), full({3, 1}, 8)));
  CHECK(same(from_vector({1, 2}, {1, 2}).expand({3, -1}), from_vector({1, 2, 1, 2, 1, 2}, {3, 2})));
  CHECK(error_of([] { zeros({3}).expand({-1, 3}); }).find("new leading dim") != std::string::npos);
}
