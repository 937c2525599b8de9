// test_libtorch_ops.cpp - the ops and methods a libtorch program types by name: norm,
// all/any, sin/cos, t, mm, bmm, expand_as, compound assignment, comparison methods,
// item<T>(), index / index_put_ with Slice and None, squeeze's PyTorch rule, libtorch's printing,
// requires_grad() as a factory option, the grad_fn names of composed ops, smooth_l1_loss and
// huber_loss; with the heed::Error each refuses bad input with.
#include <limits>
#include <iomanip>
#include <sstream>
#include <type_traits>

#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/chunked_attention.h>
#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/autograd/ops/attention/linear_attention.h>
#include <heed/autograd/ops/attention/scaled_dot_product.h>
#include <heed/autograd/ops/attention/sliding_window_attention.h>
#include <heed/autograd/ops/attention/sparse_attention.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/ops/embedding.h>
#include <heed/autograd/ops/layer_norm.h>
#include <heed/autograd/ops/linear.h>
#include <heed/autograd/ops/compare.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/loss.h>
#include <heed/autograd/ops/mm.h>
#include <heed/autograd/ops/norm.h>
#include <heed/optim/sgd.h>
#include <heed/autograd/engine/node.h>
#include <heed/autograd/ops/normalize.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/smooth_l1_loss.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/tensor_index.h>
#include <heed/autograd/ops/topk.h>
#include <heed/autograd/ops/trig.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/init.h>
#include <heed/layers/linear.h>
#include <heed/layers/loss.h>
#include "helpers.h"

using namespace heed;
using namespace heed::indexing;
using heed::test::error_of;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string str(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

std::string grad_fn_name(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->op_name() : "(none)"; }

}  // namespace

TEST_CASE("norm: p = 2, 1, inf, -inf, 0 and 3 over all, dims and keepdim") {
  Tensor x = from_vector({3, -4, 0, 1, -2, 2}, {2, 3});
  CHECK(x.norm().item() == doctest::Approx(std::sqrt(34.0)));
  CHECK(norm(x, 1).item() == doctest::Approx(12));
  CHECK(norm(x, std::numeric_limits<double>::infinity()).item() == 4);
  CHECK(norm(x, -std::numeric_limits<double>::infinity()).item() == 0);
  CHECK(norm(x, 0).item() == 5);
  CHECK(norm(x, 3).item() == doctest::Approx(std::cbrt(27.0 + 64 + 1 + 8 + 8)));
  Tensor rows = x.norm(2, 1);
  CHECK(rows.shape() == Shape{2});
  CHECK(rows.data()[0] == doctest::Approx(5));
  CHECK(rows.data()[1] == doctest::Approx(3));
  CHECK(x.norm(1, 0, true).shape() == Shape{1, 3});
  CHECK(x.norm(1, 0, true).to_vector() == std::vector<real>{4, 6, 2});
  CHECK(norm(x, 2, {0, 1}).item() == doctest::Approx(std::sqrt(34.0)));
  CHECK(norm(randn({2, 3, 4}), 2, {0, 2}, true).shape() == Shape{1, 3, 1});
  CHECK(norm(zeros({0, 3}), 2, 0).to_vector() == std::vector<real>{0, 0, 0});
  CHECK(std::isnan(norm(from_vector({1, std::nanf("")}, {2}), std::numeric_limits<double>::infinity()).item()));
  // errors name the op and the value
  CHECK(contains(error_of([&] { norm(x, -1); }), "norm: p must be >= 0"));
  CHECK(contains(error_of([&] { norm(x, 2, {1, -1}); }), "dim -1 appears more than once"));
  CHECK(contains(error_of([&] { norm(x, 2, 2); }), "dim 2 out of range"));
  CHECK(contains(error_of([&] { norm(zeros({2, 0}), std::numeric_limits<double>::infinity(), 1); }),
                 "norm: the inf-norm of an empty dim"));
  // the inf norm shares its gradient among ties, as PyTorch
  Tensor y = from_vector({2, -2, 1}, {3}).requires_grad_();
  norm(y, std::numeric_limits<double>::infinity()).backward();
  CHECK(y.grad().to_vector() == std::vector<real>{0.5, -0.5, 0});
}

TEST_CASE("all and any: 0/1 results over all and over a dim, NaN counts as true") {
  Tensor m = from_vector({1, 0, 2, 3, 5, std::nanf("")}, {2, 3});
  CHECK(all(m).item() == 0);
  CHECK(any(m).item() == 1);
  CHECK(m.all(1).to_vector() == std::vector<real>{0, 1});
  CHECK(m.any(0, true).shape() == Shape{1, 3});
  CHECK(zeros({2, 2}).any().item<bool>() == false);
  CHECK(ones({0}).all().item<bool>() == true);
  CHECK(zeros({0}).any().item<bool>() == false);
  CHECK_FALSE(all(m.requires_grad_()).requires_grad());
}

TEST_CASE("sin, cos, t, mm, bmm and expand_as as libtorch has them") {
  Tensor x = from_vector({0, 1.5f, -2}, {3});
  CHECK(sin(x).data()[1] == doctest::Approx(std::sin(1.5)));
  CHECK(x.cos().data()[2] == doctest::Approx(std::cos(-2.0)));
  Tensor a = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor at = a.t();
  CHECK(at.shape() == Shape{3, 2});
  CHECK(at.to_vector() == std::vector<real>{1, 4, 2, 5, 3, 6});
  CHECK(x.t().shape() == x.shape());
  CHECK(contains(error_of([] { zeros({2, 2, 2}).t(); }), "t: expects a tensor of at most 2 dims"));
  CHECK(heed::test::allclose(a.mm(at), matmul(a, at)));
  CHECK(contains(error_of([&] { mm(a, a); }), "mm: shapes (2,3) and (2,3) cannot be multiplied"));
  CHECK(contains(error_of([&] { mm(a, x); }), "mm: expects two 2-D tensors"));
  Tensor p = randn({4, 2, 3}), q = randn({4, 3, 5});
  CHECK(heed::test::allclose(bmm(p, q), matmul(p, q)));
  CHECK(contains(error_of([&] { bmm(p, randn({3, 3, 5})); }), "bmm: batch sizes differ"));
  CHECK(contains(error_of([&] { bmm(a, a); }), "bmm: expects two 3-D tensors"));
  Tensor col = from_vector({1, 2}, {2, 1});
  CHECK(col.expand_as(a).to_vector() == std::vector<real>{1, 1, 1, 2, 2, 2});
  CHECK(contains(error_of([&] { a.expand_as(col); }), "expand"));
}

TEST_CASE("comparison methods: x.eq(y), x.gt(0), ... give 0/1 tensors") {
  Tensor a = from_vector({1, 2, 3}, {3}), b = from_vector({3, 2, 1}, {3});
  CHECK(a.eq(b).to_vector() == std::vector<real>{0, 1, 0});
  CHECK(a.ne(b).to_vector() == std::vector<real>{1, 0, 1});
  CHECK(a.lt(b).to_vector() == std::vector<real>{1, 0, 0});
  CHECK(a.le(b).to_vector() == std::vector<real>{1, 1, 0});
  CHECK(a.gt(2).to_vector() == std::vector<real>{0, 0, 1});
  CHECK(a.ge(2).to_vector() == std::vector<real>{0, 1, 1});
  CHECK(a.eq(2).sum().item<int64_t>() == 1);
}

TEST_CASE("item<T>(): float, double, int64_t (truncating), bool, and the out-of-range errors") {
  CHECK(scalar_tensor(2.75f).item<float>() == 2.75f);
  CHECK(scalar_tensor(2.75f).item<double>() == 2.75);
  CHECK(scalar_tensor(2.75f).item<int64_t>() == 2);
  CHECK(scalar_tensor(-2.75f).item<int>() == -2);
  CHECK(scalar_tensor(0).item<bool>() == false);
  CHECK(scalar_tensor(-0.5f).item<bool>() == true);
  CHECK(contains(error_of([] { scalar_tensor(std::nanf("")).item<int64_t>(); }), "item: the value nan"));
  CHECK(contains(error_of([] { scalar_tensor(3e9f).item<int32_t>(); }), "does not fit an integer type"));
  CHECK(contains(error_of([] { scalar_tensor(-1).item<uint8_t>(); }), "item"));
  CHECK(contains(error_of([] { zeros({2}).item<float>(); }), "item: only a one-element tensor"));
}

TEST_CASE("index: x[:, 0], x[1:-1], x[:, ::2], None and Ellipsis, with Python's clamping") {
  Tensor x = arange(12).reshape({3, 4});
  CHECK(x.index({Slice(), 0}).to_vector() == std::vector<real>{0, 4, 8});
  CHECK(x.index({1}).to_vector() == std::vector<real>{4, 5, 6, 7});
  CHECK(x.index({-1, -1}).shape() == Shape{});
  CHECK(x.index({-1, -1}).item() == 11);
  CHECK(x.index({Slice(1, -1)}).shape() == Shape{1, 4});
  CHECK(x.index({Slice(), Slice(0, None, 2)}).to_vector() == std::vector<real>{0, 2, 4, 6, 8, 10});
  CHECK(x.index({Slice(-100, 100, 3), Slice(1, None, 2)}).to_vector() == std::vector<real>{1, 3});
  CHECK(x.index({Slice(3, 1)}).shape() == Shape{0, 4});
  CHECK(x.index({None, Ellipsis, 1}).shape() == Shape{1, 3});
  CHECK(x.index({"...", None}).shape() == Shape{3, 4, 1});
  CHECK(x.index({Ellipsis}).to_vector() == x.to_vector());
  size_t row = 2;  // any integer type indexes
  CHECK(x.index({row, 3}).item() == 11);
  CHECK(contains(error_of([&] { x.index({3}); }), "index: index 3 is out of range for dim 0 of size 3 of shape (3,4)"));
  CHECK(contains(error_of([&] { x.index({0, -5}); }), "index -5 is out of range for dim 1"));
  CHECK(contains(error_of([&] { x.index({Slice(0, None, 0)}); }), "slice step must be positive, got 0"));
  CHECK(contains(error_of([&] { x.index({Slice(None, None, -1)}); }), "got -1"));
  CHECK(contains(error_of([&] { x.index({0, 0, 0}); }), "too many indices (3) for shape (3,4)"));
  CHECK(contains(error_of([&] { x.index({Ellipsis, 0, Ellipsis}); }), "at most one Ellipsis"));
  CHECK(contains(error_of([&] { x.index({"..x"}); }), "the only string index is \"...\""));
}

TEST_CASE("index_put_: pe[:, 0::2] = sin(...), in place with a version bump, or recorded") {
  // the sinusoidal table of "Attention Is All You Need", as its PyTorch code writes it
  const int64_t T = 5, E = 6;
  Tensor pos = arange(T).unsqueeze(1);                                     // (T, 1)
  Tensor div = exp(arange(0, E, 2) * real(-std::log(10000.0) / E));        // (E/2)
  Tensor pe = zeros({T, E});
  const uint64_t v0 = pe.version();
  Tensor alias = pe;  // another handle to the same storage sees the in-place write
  pe.index_put_({Slice(), Slice(0, None, 2)}, sin(pos * div));
  pe.index_put_({Slice(), Slice(1, None, 2)}, cos(pos * div));
  CHECK(pe.version() == v0 + 2);
  CHECK(alias.impl() == pe.impl());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < E / 2; ++i) {
      const double angle = t * std::exp(2 * i * -std::log(10000.0) / E);
      CHECK(pe.at({t, 2 * i}) == doctest::Approx(std::sin(angle)).epsilon(1e-5));
      CHECK(alias.at({t, 2 * i + 1}) == doctest::Approx(std::cos(angle)).epsilon(1e-5));
    }
  // a number, and a value broadcast over the region
  Tensor x = zeros({2, 4});
  x.index_put_({0}, 7);
  x.index_put_({1, Slice(1, 3)}, from_vector({1, 2}, {2}));
  CHECK(x.to_vector() == std::vector<real>{7, 7, 7, 7, 0, 1, 2, 0});
  // a value that is a block of x itself (a shared view) partly overlapping the region is
  // refused, as PyTorch's y[1:] = y[:3] ("some elements of the input tensor and the
  // written-to tensor refer to a single memory location"); the same block, or a strided
  // region, is fine; y.index(...) of a block is such a view too (core/tensor.h, "Views")
  Tensor y = arange(4);
  CHECK(contains(error_of([&] { y.index_put_({Slice(1, None)}, y.narrow(0, 0, 3)); }),
                 "index_put_: some elements of the input (shape (3)"));
  CHECK(y.to_vector() == std::vector<real>{0, 1, 2, 3});
  y.index_put_({Slice(1, 3)}, y.narrow(0, 1, 2));
  y.index_put_({Slice(0, None, 2)}, y.narrow(0, 1, 2));  // read whole, then written
  CHECK(y.to_vector() == std::vector<real>{1, 1, 2, 3});
  CHECK(contains(error_of([&] { y.index_put_({Slice(1, None)}, y.index({Slice(0, 3)})); }),
                 "index_put_: some elements of the input (shape (3)"));
  y.index_put_({Slice(1, None)}, y.index({Slice(0, 3)}).clone());
  CHECK(y.to_vector() == std::vector<real>{1, 1, 1, 2});
  Tensor same = arange(4);
  same.index_put_({Ellipsis}, same);
  CHECK(same.to_vector() == std::vector<real>{0, 1, 2, 3});
  // refused on a leaf that requires grad while grad mode is on, allowed under NoGradGuard
  Tensor w = zeros({2, 4}).requires_grad_();
  CHECK(contains(error_of([&] { w.index_put_({0}, 1); }),
                 "index_put_: a leaf that requires grad cannot be updated in place"));
  {
    NoGradGuard no_grad;
    w.index_put_({0}, 1);
  }
  CHECK(w.sum().item() == 4);
  // on a non-leaf in a graph: recorded, and the handle refers to the result
  Tensor h = w * 2;
  Tensor before = h;
  h.index_put_({Slice(), 0}, 5);
  CHECK(h.impl() != before.impl());
  CHECK(grad_fn_name(h) == "index_put");
  CHECK(before.at({0, 0}) == 2);
  CHECK(h.at({0, 0}) == 5);
  h.sum().backward();
  CHECK(w.grad().to_vector() == std::vector<real>{0, 2, 2, 2, 0, 2, 2, 2});
  CHECK(contains(error_of([&] { x.index_put_({Slice(), 0}, zeros({3})); }),
                 "index_put_: a value of shape (3) does not broadcast to the indexed region's shape (2)"));
  CHECK(contains(error_of([&] { Tensor u; u.index_put_({0}, 1); }), "index_put_: use of an undefined tensor"));
}

TEST_CASE("index_put_: a value with extra leading size-1 dims fills the region, as PyTorch's x[I] = v") {
  // x[:, 0::2] = v with v (1, 1, 3, 2) on a (3, 2) region: PyTorch drops the leading 1s
  Tensor x = zeros({3, 4});
  x.index_put_({Slice(), Slice(0, None, 2)}, from_vector({1, 2, 3, 4, 5, 6}, {1, 1, 3, 2}));
  CHECK(x.to_vector() == std::vector<real>{1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0});
  // then it broadcasts: (1, 1, 2) on the (3, 2) region fills every row with (7, 8)
  x.index_put_({Slice(), Slice(1, None, 2)}, from_vector({7, 8}, {1, 1, 2}));
  CHECK(x.to_vector() == std::vector<real>{1, 7, 2, 8, 3, 7, 4, 8, 5, 7, 6, 8});
  // and (1, 1, 1) on one element, (1, 3) on a (3) row
  x.index_put_({2, 3}, from_vector({9}, {1, 1, 1}));
  x.index_put_({0, Slice(0, 3)}, from_vector({-1, -2, -3}, {1, 3}));
  CHECK(x.to_vector() == std::vector<real>{-1, -2, -3, 8, 3, 7, 4, 8, 5, 7, 6, 9});
  // in a graph (index_put, recorded): the value's gradient keeps its (1, 1, 3, 2) shape
  Tensor v = from_vector({1, 2, 3, 4, 5, 6}, {1, 1, 3, 2}).requires_grad_();
  Tensor y = index_put(zeros({3, 4}), {Slice(), Slice(0, None, 2)}, v * 2);
  CHECK(y.at({2, 2}) == 12);
  (y * arange(12).reshape({3, 4})).sum().backward();
  CHECK(v.grad().shape() == Shape{1, 1, 3, 2});
  CHECK(v.grad().to_vector() == std::vector<real>{0, 4, 8, 12, 16, 20});  // 2 * x's flat position
  // a real mismatch is still refused, naming the value's shape as given
  CHECK(contains(error_of([&] { x.index_put_({Slice(), Slice(0, None, 2)}, zeros({1, 2, 3, 2})); }),
                 "index_put_: a value of shape (1,2,3,2) does not broadcast to the indexed region's shape (3,2)"));
  CHECK(contains(error_of([&] { x.index_put_({Slice(), Slice(0, None, 2)}, zeros({1, 1, 2, 2})); }),
                 "index_put_: a value of shape (1,1,2,2) does not broadcast to the indexed region's shape (3,2)"));
  CHECK(contains(error_of([&] { index_put(x, {0}, zeros({2, 1, 4})); }),
                 "index_put: a value of shape (2,1,4) does not broadcast to the indexed region's shape (4)"));
}

TEST_CASE("cat({}) and stack({}) compile, as libtorch's, and throw naming the op") {
  CHECK(contains(error_of([] { cat({}, 0); }), "cat: needs at least one tensor"));
  CHECK(contains(error_of([] { cat({}); }), "cat: needs at least one tensor"));
  CHECK(contains(error_of([] { stack({}, 1); }), "stack: needs at least one tensor"));
  // braced lists still pick the overload of their elements' type
  Tensor a = arange(6).reshape({2, 3}), b = ones({2, 1});
  static_assert(std::is_same_v<decltype(cat({a, b}, 1)), Tensor>);
  static_assert(std::is_same_v<decltype(cat({IndexTensor({1}), IndexTensor({2})})), IndexTensor>);
  static_assert(std::is_same_v<decltype(stack({IndexTensor({1}), IndexTensor({2})})), IndexTensor>);
  CHECK(cat({a, b}, 1).to_vector() == std::vector<real>{0, 1, 2, 1, 3, 4, 5, 1});
  CHECK(stack({a, a}, 1).shape() == Shape{2, 2, 3});
  CHECK(cat({IndexTensor({1, 2}), IndexTensor({3})}).vec() == std::vector<int64_t>{1, 2, 3});
}

TEST_CASE("compound assignment: in place with a version bump, refused on a grad leaf, recorded in a graph") {
  Tensor a = ones({2, 3});
  Tensor alias = a;
  const uint64_t v0 = a.version();
  a += from_vector({1, 2, 3}, {3});  // broadcast
  a -= 1;
  a *= 2;
  a /= from_vector({1, 2}, {2, 1});
  CHECK(a.version() == v0 + 4);
  CHECK(alias.to_vector() == std::vector<real>{2, 4, 6, 1, 2, 3});
  CHECK(contains(error_of([&] { a += zeros({3, 3}); }), "+=: the right side's shape (3,3)"));
  CHECK(contains(error_of([&] { Tensor s = zeros({3}); s += zeros({2, 3}); }),
                 "+=: the right side's shape (2,3) does not broadcast to x's shape (3)"));
  Tensor w = ones({2}).requires_grad_();
  CHECK(contains(error_of([&] { w += 1; }), "+=: a leaf that requires grad cannot be updated in place"));
  CHECK(contains(error_of([&] { w *= 2; }), "NoGradGuard"));
  {
    NoGradGuard no_grad;
    w -= 0.5;  // an update of a parameter outside the graph, as an optimizer does
  }
  CHECK(w.to_vector() == std::vector<real>{0.5, 0.5});
  // libtorch's running loss: loss += criterion(...) builds the graph and the sum
  Tensor loss = zeros({});
  for (int t = 0; t < 3; ++t) loss += (w * real(t + 1)).sum();
  CHECK(loss.item() == doctest::Approx(6));
  CHECK(grad_fn_name(loss) == "add");
  loss.backward();
  CHECK(w.grad().to_vector() == std::vector<real>{6, 6});
}

TEST_CASE("squeeze follows PyTorch: a dim whose size is not 1 is left as it is") {
  Tensor x = zeros({2, 1, 3});
  CHECK(x.squeeze(0).shape() == Shape{2, 1, 3});
  CHECK(x.squeeze(1).shape() == Shape{2, 3});
  CHECK(x.squeeze(-1).shape() == Shape{2, 1, 3});
  CHECK(x.squeeze().shape() == Shape{2, 3});
  CHECK(zeros({1, 1}).squeeze().shape() == Shape{});
  Tensor p = randn({2, 3}).requires_grad_();
  Tensor q = p * 2;
  CHECK(q.squeeze(0).grad_fn() == q.grad_fn());  // unchanged, no new node
  CHECK(contains(error_of([&] { x.squeeze(3); }), "squeeze: dim 3 out of range"));
}

TEST_CASE("printing: libtorch's layout, values then [ CPUFloatType{...} ], for 0-D to 3-D") {
  CHECK(str(scalar_tensor(7)) == "7\n[ CPUFloatType{} ]");
  CHECK(str(from_vector({1, 2, 3}, {3})) == " 1\n 2\n 3\n[ CPUFloatType{3} ]");  // whole numbers
  CHECK(str(from_vector({1, 2, 3, 4.5f}, {2, 2})) == " 1.0000  2.0000\n 3.0000  4.5000\n[ CPUFloatType{2,2} ]");
  CHECK(str(ones({2, 3}).requires_grad_()) == " 1  1  1\n 1  1  1\n[ CPUFloatType{2,3} ]");
  CHECK(str(arange(8).reshape({2, 2, 2})) ==
        "(1,.,.) = \n  0  1\n  2  3\n\n(2,.,.) = \n  4  5\n  6  7\n[ CPUFloatType{2,2,2} ]");
  // above 3-D the first index counts fastest, as libtorch prints it
  CHECK(contains(str(arange(4).reshape({2, 2, 1, 1})), "(1,1,.,.) = \n  0\n\n(2,1,.,.) = \n  2\n\n(1,2,.,.) = \n  1\n"));
  CHECK(str(zeros({2, 0})) == "[ CPUFloatType{2,0} ]");
  CHECK(str(Tensor()) == "[ Tensor (undefined) ]");
}

TEST_CASE("printing: libtorch's widths, scales, scientific form, column blocks, and the stream restored") {
  CHECK(str(from_vector({100000.5f, 300000.5f}, {2})) == "1e+05 *\n 1.0000\n 3.0000\n[ CPUFloatType{2} ]");
  CHECK(str(from_vector({0.001f, 0.002f}, {2})) == "0.001 *\n 1.0000\n 2.0000\n[ CPUFloatType{2} ]");
  CHECK(str(from_vector({123456.5f, 2.5f}, {2})) == " 1.2346e+05\n 2.5000e+00\n[ CPUFloatType{2} ]");
  CHECK(str(from_vector({INFINITY, 1.5f, NAN}, {3})) == "    inf\n 1.5000\n    nan\n[ CPUFloatType{3} ]");
  const std::string wide = str(arange(30).reshape({1, 30}));  // 20 columns of width 3 fit 80
  CHECK(contains(wide, "Columns 1 to 20  0   1   2"));
  CHECK(contains(wide, " 19\n\nColumns 21 to 30 20  21"));
  std::ostringstream os;
  os << std::setprecision(3) << from_vector({0.5f}, {1}) << ' ' << 3.14159;
  CHECK(os.str() == " 0.5000\n[ CPUFloatType{1} ] 3.14");
  CHECK(str(arange(2000)).size() > 2000 * 5);  // every element, as libtorch (no "...")
}

TEST_CASE("printing a grad_fn: the node's address, as libtorch's shared_ptr<Node>; name() is its class") {
  Tensor x = ones({2}).requires_grad_();
  Tensor y = x + x;
  std::ostringstream os, want;
  os << y.grad_fn();
  want << static_cast<const void*>(y.grad_fn().get());
  CHECK(os.str() == want.str());
  CHECK(y.grad_fn()->name() == "AddBackward0");
}

TEST_CASE("nn::init takes Tensor by value: a const auto& loop over parameters initialises them") {
  const std::vector<Tensor> params = {zeros({4, 3}, requires_grad()), zeros({2, 5}, requires_grad())};
  for (const auto& p : params) nn::init::xavier_uniform_(p);
  for (const auto& p : params) CHECK(norm(p).item() > 0);
  Tensor b = nn::init::constant_(zeros({3}), 2);  // returns the tensor, as libtorch
  CHECK(b.to_vector() == std::vector<real>{2, 2, 2});
}

TEST_CASE("requires_grad() as a factory option, libtorch's torch::requires_grad()") {
  Tensor w = randn({3, 4}, requires_grad());
  CHECK(w.requires_grad());
  CHECK(w.is_leaf());
  CHECK(zeros({2}, requires_grad()).requires_grad());
  CHECK_FALSE(ones({2}, requires_grad(false)).requires_grad());
  CHECK(full({2}, 3, TensorOptions().requires_grad(true)).requires_grad());
  CHECK(from_vector({1, 2}, {2}, requires_grad()).requires_grad());
  CHECK(rand({2}, requires_grad()).requires_grad());
  CHECK(empty({2}, requires_grad()).requires_grad());
}

TEST_CASE("torch::tensor, a one-int size and dtypes as libtorch writes them") {
  const Tensor a = tensor({0.1, 1.0, 0.0001});
  REQUIRE(a.shape() == Shape{3});
  CHECK(a.data()[0] == real(0.1));
  CHECK(a.data()[2] == real(0.0001));
  const Tensor m = tensor({{1, 2}, {3, 4.5}}, requires_grad());
  CHECK(m.shape() == Shape{2, 2});
  CHECK(m.data()[3] == real(4.5));
  CHECK(m.requires_grad());
  const Tensor s = tensor(2.5);
  CHECK(s.dim() == 0);
  CHECK(s.item() == real(2.5));
  CHECK(tensor(std::vector<real>{1, 2}).shape() == Shape{2});
  CHECK(contains(error_of([] { tensor({{1, 2}, {3}}); }), "tensor: rows of different lengths (2 and 1)"));
  // randn(3), ones(2) as IntArrayRef allows; ones({}) stays 0-D
  CHECK(randn(3, requires_grad()).shape() == Shape{3});
  CHECK(ones(2).shape() == Shape{2});
  CHECK(ones({}).dim() == 0);
  CHECK(zeros(4).reshape({2, -1}).shape() == Shape{2, 2});
  // dtype: the build's real type passes; the other float type and integer types are errors
  const ScalarType mine = sizeof(real) == sizeof(double) ? kDouble : kFloat;
  const ScalarType other = mine == kFloat ? kFloat64 : kFloat32;
  CHECK(zeros({2}, mine).shape() == Shape{2});
  CHECK(zeros({2}, dtype(mine).requires_grad(true)).requires_grad());
  CHECK(contains(error_of([&] { zeros({2}, other); }), "TensorOptions: dtype"));
  CHECK(contains(error_of([&] { zeros({2}, other); }), sizeof(real) == 4 ? "link libheed_f64.a for double" : "link libheed.a for float"));
  CHECK(contains(error_of([] { tensor({1, 2}, kLong); }), "TensorOptions: dtype kLong: a heed Tensor holds real numbers; integer ids are heed::IndexTensor"));
  CHECK(contains(error_of([] { ones(2, kBool); }), "dtype kBool"));
  // devices: the CPU is a no-op, CUDA an error naming the call
  const Device cpu(cuda::is_available() ? kCUDA : kCPU);
  CHECK(cpu.is_cpu());
  CHECK(cuda::device_count() == 0);
  const Tensor moved = a.to(cpu);
  CHECK(moved.impl() == a.impl());
  CHECK(a.to(sizeof(real) == 4 ? kFloat : kDouble).impl() == a.impl());
  CHECK(a.device() == Device(kCPU));
  CHECK(zeros({2}, cpu).numel() == 2);
  CHECK(zeros({2}, TensorOptions().dtype(mine).device(kCPU).requires_grad(true)).requires_grad());
  CHECK(contains(error_of([&] { a.to(Device(kCUDA)); }), "to: device cuda: heed runs on the CPU only"));
  CHECK(contains(error_of([&] { a.to(other); }), "to: dtype"));
  CHECK(contains(error_of([] { zeros({2}, kCUDA); }), "TensorOptions: device cuda"));
  nn::Linear fc(2, 3);
  fc->to(cpu);
  CHECK(contains(error_of([&] { fc->to(kCUDA); }), "Module::to: device cuda"));
  // x[i] is x.select(0, i): W[i].item<float>() as libtorch writes it
  const Tensor w = tensor({{1, 2}, {3, 4}});
  CHECK(w[1].shape() == Shape{2});
  CHECK(w[1][0].item<float>() == 3.f);
  CHECK(w[-1][-1].item<float>() == 4.f);
  CHECK(contains(error_of([&] { w[2]; }), "select"));
  Tensor p = zeros({2}, requires_grad());
  optim::SGD sgd({p}, 0.1);  // optim::SGD opt(params, 0.1): a bare learning rate
  sum(p).backward();
  sgd.step();
  CHECK(p.data()[0] == doctest::Approx(-0.1));
}

TEST_CASE("grad_fn names contain the op's name, composed ops included") {
  Tensor x = randn({2, 3}).requires_grad_(), y = randn({2, 3}).requires_grad_();
  Tensor m = randn({3, 2}).requires_grad_();
  Tensor b = randn({2, 2, 3}).requires_grad_();
  const std::vector<std::pair<std::string, Tensor>> cases = {
      {"mean", x.mean()},
      {"mean", mean(x, 1)},
      {"sum", x.sum()},
      {"add", x + y},
      {"add", x + 1},
      {"sub", x - y},
      {"sub", x - 1},
      {"sub", 1 - x},
      {"mul", x * y},
      {"div", x / y},
      {"div", 1 / x},
      {"neg", -x},
      {"pow", x.pow(2)},
      {"exp", x.exp()},
      {"sin", x.sin()},
      {"cos", x.cos()},
      {"norm", x.norm()},
      {"norm", x.norm(1, 1)},
      {"mm", x.mm(m)},
      {"bmm", b.bmm(b.transpose(1, 2))},
      {"matmul", x.matmul(m)},
      {"t", x.t()},
      {"transpose", x.transpose(0, 1)},
      {"expand", x.expand_as(b)},
      {"view", x.view({3, 2})},
      {"reshape", x.reshape({3, 2})},
      {"squeeze", x.unsqueeze(0).squeeze(0)},
      {"squeeze", x.unsqueeze(1).squeeze()},
      {"unsqueeze", x.unsqueeze(0)},
      {"flatten", b.flatten(1)},
      {"select", x.select(0, 1)},
      {"narrow", x.narrow(1, 0, 2)},
      {"slice", slice(x, 1, 0, 3, 2)},
      {"index", x.index({Slice(), 0})},
      {"index_put", index_put(x, {0}, y.index({1}))},
      {"softmax", x.softmax(1)},
      {"log_softmax", x.log_softmax(1)},
      {"var", var(x)},
      {"max", x.max()},
      {"clamp", clamp(x, -1, 1)},
      {"normalize", normalize(x, 2, 1)},
      {"smooth_l1_loss", smooth_l1_loss(x, y)},
      {"huber_loss", huber_loss(x, y, Reduction::None)},
      {"mse_loss", mse_loss(x, y, Reduction::Mean)},
      {"topk", x.topk(2).values},
      {"cat", cat({x, y})},
      {"stack", stack({x, y})},
  };
  for (const auto& [op, t] : cases) {
    const std::string name = grad_fn_name(t);
    INFO(op, " -> grad_fn ", name);
    CHECK(contains(name, op));
  }
}

TEST_CASE("grad_fn names of the elementwise, layer, loss and attention ops") {
  Tensor x = randn({2, 3}).requires_grad_(), y = randn({2, 3}).requires_grad_();
  Tensor w = randn({4, 3}).requires_grad_();
  Tensor q = randn({2, 5, 4}).requires_grad_();
  const IndexTensor ids({0, 2}), cls({1, 0});
  const Tensor mask = from_vector({1, 0, 1, 1, 0, 1}, {2, 3});
  const std::vector<std::pair<std::string, Tensor>> cases = {
      {"gelu", gelu(x)},
      {"elu", elu(x)},
      {"sigmoid", sigmoid(x)},
      {"tanh", tanh(x)},
      {"relu", relu(x)},
      {"log", log(abs(x) + 1)},
      {"sqrt", sqrt(abs(x) + 1)},
      {"abs", abs(x)},
      {"clamp_min", clamp_min(x, 0)},
      {"masked_fill", masked_fill(x, mask, 0)},
      {"where", where(mask, x, y)},
      {"triu", triu(x)},
      {"tril", tril(x)},
      {"dropout", dropout(x, 0.5, true)},
      {"embedding", embedding(ids, w)},
      {"linear", linear(x, w)},
      {"layer_norm", layer_norm(x, {3})},
      {"cross_entropy", cross_entropy_loss(x, cls, Tensor(), Reduction::Mean, -100, 0)},
      {"nll_loss", nll_loss(x, cls, Tensor(), Reduction::Mean, -100)},
      {"binary_cross_entropy_with_logits",
       binary_cross_entropy_with_logits(x, mask, Tensor(), Tensor(), Reduction::Mean)},
      {"index_select", index_select(x, 1, ids)},
      {"gather", gather(x, 1, IndexTensor({0, 1}, {2, 1}))},
      {"sum_to", sum_to(x, {3})},
      {"var", var(x, 1)},
      {"min", x.min()},
      {"flash_attention", flash_attention(q, q, q)},
      {"linear_attention", linear_attention(q, q, q)},
      {"chunked_attention", chunked_attention(q, q, q, {}, 2)},
      {"sliding_window_attention", sliding_window_attention(q, q, q, {}, 1)},
      {"scaled_dot_product_attention", scaled_dot_product_attention(q, q, q).context},
      {"sparse_attention", sparse_attention(q, q, q, ones({5, 5})).context},
      {"chunked_attention", chunked_attention(q, q, q, {}, 5)},  // one chunk
  };
  for (const auto& [op, t] : cases) {
    const std::string name = grad_fn_name(t);
    INFO(op, " -> grad_fn ", name);
    CHECK(contains(name, op));
  }
}

TEST_CASE("smooth_l1_loss and huber_loss: values, options, and their errors") {
  namespace F = heed::nn::functional;
  Tensor x = from_vector({0, 0.25f, 3}, {3}), y = zeros({3});
  // smooth_l1 with beta 1: 0, 0.5 * 0.0625, 3 - 0.5
  CHECK(smooth_l1_loss(x, y, Reduction::None).to_vector() == std::vector<real>{0, 0.03125f, 2.5f});
  CHECK(F::smooth_l1_loss(x, y).item() == doctest::Approx((0.03125 + 2.5) / 3));
  CHECK(F::smooth_l1_loss(x, y, F::SmoothL1LossFuncOptions().beta(0)).item() == doctest::Approx(3.25 / 3));
  // huber with delta 2: 0, 0.5 * 0.0625, 2 * (3 - 1)
  CHECK(F::huber_loss(x, y, F::HuberLossFuncOptions().delta(2).reduction(Reduction::Sum)).item() ==
        doctest::Approx(0.03125 + 4));
  CHECK(F::huber_loss(zeros({0}), zeros({0})).item() == 0);
  CHECK(contains(error_of([&] { smooth_l1_loss(x, y, Reduction::Mean, -1); }),
                 "smooth_l1_loss: beta must be finite and >= 0, got -1"));
  CHECK(contains(error_of([&] { huber_loss(x, y, Reduction::Mean, 0); }), "huber_loss: delta must be finite and > 0, got 0"));
  CHECK(contains(error_of([&] { huber_loss(x, zeros({2})); }), "huber_loss: input (3) and target (2) do not match"));
}

TEST_CASE("README's API rows for these ops compile and run") {
  namespace F = heed::nn::functional;
  Tensor x = randn({3, 4}, requires_grad()), y = randn({3, 4}), v = randn({3, 2});
  Tensor z = x * 1;
  z += y;
  CHECK(z.requires_grad());
  CHECK(x.eq(y).sum().item() == 0);
  CHECK(all(ones({2})).item<bool>());
  CHECK(x.norm(2, 1).shape() == Shape{3});
  CHECK(mm(x, y.t()).shape() == Shape{3, 3});
  CHECK(bmm(x.unsqueeze(0), y.t().unsqueeze(0)).shape() == Shape{1, 3, 3});
  CHECK(ones({3, 1}).expand_as(y).shape() == y.shape());
  CHECK(x.index({Slice(), 0}).shape() == Shape{3});
  Tensor pe = zeros({3, 4});
  pe.index_put_({Slice(), Slice(0, None, 2)}, v);
  CHECK(pe.at({2, 2}) == v.at({2, 1}));
  CHECK(x.sum().item<float>() == float(x.sum().item()));
  const IndexTensor target({0, 1, 3});
  CHECK(argmax(x, 1).eq(target).mean().dim() == 0);
  CHECK(F::smooth_l1_loss(x, y, F::SmoothL1LossFuncOptions().beta(0.5)).dim() == 0);
  CHECK(F::huber_loss(x, y, F::HuberLossFuncOptions().delta(2)).dim() == 0);
}
