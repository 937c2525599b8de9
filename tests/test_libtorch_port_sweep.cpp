// test_libtorch_port_sweep.cpp - the libtorch spellings found by compiling pytorch-cpp's
// tutorials and pytorch/examples' cpp/ programs against heed: x.sizes() printed as libtorch,
// torch::randint, split / split_with_sizes / unbind / movedim / swapaxes / swapdims / view_as
// / reshape_as, the ATen-order losses with their defaults (torch::nll_loss(logp, y)),
// dataset.get_batch(0) and IndexTensor::clone(); then every libtorch view op heed has, walked
// in one list: each shares its base's storage (a write reaches the base) or is a copy whose
// in-place op raises, naming the view op. Values are PyTorch 1.13's.
#include <sstream>
#include <string>
#include <vector>

#include <heed/autograd/ops/loss.h>
#include <heed/autograd/engine/node.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/tensor_index.h>
#include <heed/core/random.h>
#include <heed/optim/data/data.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;
using heed::test::error_of;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

template <class T>
std::string printed(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::vector<std::vector<real>> values_of(const std::vector<Tensor>& ts) {
  std::vector<std::vector<real>> out;
  for (const Tensor& t : ts) out.push_back(t.to_vector());
  return out;
}

Tensor grid234() { return arange(24).reshape({2, 3, 4}); }

}  // namespace

TEST_CASE("sweep: x.sizes() is the shape and prints as libtorch's, [2, 3]") {
  Tensor x = zeros({2, 3});
  CHECK(printed(x.sizes()) == "[2, 3]");
  CHECK(printed(scalar_tensor(1).sizes()) == "[]");
  CHECK(printed(IndexTensor({1, 2, 3}).sizes()) == "[3]");
  CHECK(x.sizes() == x.shape());
  CHECK(x.sizes()[1] == 3);
  CHECK(x.sizes().size() == 2);
  CHECK(x.sizes().vec() == std::vector<int64_t>{2, 3});
  CHECK(zeros(x.sizes()).shape() == Shape{2, 3});     // where a Shape goes
  CHECK(printed(x.shape()) == "(2,3)");               // heed's messages keep theirs
}

TEST_CASE("sweep: torch::randint gives integers in [low, high): ids without options, reals with them") {
  manual_seed(3);
  IndexTensor ids = randint(0, 10, {15, 1});  // libtorch's default dtype, kLong
  CHECK(ids.shape() == Shape{15, 1});
  Tensor xs = randint(0, 10, {2000}, TensorOptions(kFloat).device(kCPU));
  CHECK(xs.shape() == Shape{2000});
  std::vector<int> seen(10, 0);
  for (real v : xs.to_vector()) {
    REQUIRE(v >= 0);
    REQUIRE(v < 10);
    REQUIRE(v == std::floor(v));
    ++seen[int(v)];
  }
  for (int c : seen) CHECK(c > 120);  // 200 expected each
  IndexTensor hi = randint(3, {400});
  for (int64_t v : hi.vec()) REQUIRE((v >= 0 && v < 3));
  IndexTensor neg = randint(-5, -3, {100});
  for (int64_t v : neg.vec()) REQUIRE((v == -5 || v == -4));
  CHECK(randint(7, {3}, requires_grad()).requires_grad());
  manual_seed(9);
  const std::vector<int64_t> a = randint(0, 1000, {8}).vec();
  manual_seed(9);
  CHECK(randint(0, 1000, {8}).vec() == a);  // from the seeded generator
  CHECK(contains(error_of([] { randint(5, 5, {2}); }),
                 "randint: random_ expects 'from' to be less than 'to', but got from=5 >= to=5"));
  CHECK(contains(error_of([] { randint(0, 5, {2}, kLong); }), "randint: dtype kLong"));
}

TEST_CASE("sweep: split, split_with_sizes and unbind as torch's, with libtorch's node names") {
  Tensor x = grid234();
  std::vector<Tensor> s = x.split(2, 0);
  REQUIRE(s.size() == 1);
  CHECK(s[0].shape() == Shape{2, 3, 4});
  s = x.split(2, 2);
  REQUIRE(s.size() == 2);
  CHECK(s[1].to_vector() == std::vector<real>{2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23});
  s = x.split(2, 1);  // 2 then 1
  REQUIRE(s.size() == 2);
  CHECK(s[0].shape() == Shape{2, 2, 4});
  CHECK(s[1].shape() == Shape{2, 1, 4});
  CHECK(values_of(x.split({1, 3}, 2)) ==
        std::vector<std::vector<real>>{{0, 4, 8, 12, 16, 20},
                                       {1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23}});
  CHECK(values_of(x.split_with_sizes({1, 3}, -1)) == values_of(split(x, {1, 3}, 2)));
  CHECK(values_of(x.unbind(1)) == std::vector<std::vector<real>>{{0, 1, 2, 3, 12, 13, 14, 15},
                                                                 {4, 5, 6, 7, 16, 17, 18, 19},
                                                                 {8, 9, 10, 11, 20, 21, 22, 23}});
  CHECK(x.unbind().size() == 2);
  CHECK(x.unbind()[1].shape() == Shape{3, 4});
  std::vector<Tensor> e = zeros({0, 2}).split(0, 0);  // one empty piece, as torch
  REQUIRE(e.size() == 1);
  CHECK(e[0].shape() == Shape{0, 2});

  Tensor p = randn({4, 3}).requires_grad_();
  CHECK(p.split(2)[0].grad_fn()->name() == "SplitBackward0");
  CHECK(p.split({1, 3})[0].grad_fn()->name() == "SplitWithSizesBackward0");
  CHECK(p.unbind(1)[0].grad_fn()->name() == "UnbindBackward0");
  std::vector<Tensor> rows = p.unbind();
  (rows[0] * 1 + rows[2] * 3).sum().backward();
  CHECK(p.grad().to_vector() == std::vector<real>{1, 1, 1, 0, 0, 0, 3, 3, 3, 0, 0, 0});

  CHECK(contains(error_of([&] { x.split(-1, 0); }), "split: expects split_size be non-negative, but got split_size=-1"));
  CHECK(contains(error_of([&] { x.split(0, 1); }), "split_size can only be 0 if dimension size is 0, but got dimension size of 3"));
  CHECK(contains(error_of([&] { x.split({1, 2}, 0); }),
                 "split_with_sizes: expects split_sizes to sum exactly to 2 (input tensor's size at dimension 0), but got split_sizes=[1, 2]"));
  CHECK(contains(error_of([&] { x.unbind(3); }), "unbind"));
  CHECK(contains(error_of([&] { scalar_tensor(1).unbind(); }), "unbind"));
}

TEST_CASE("sweep: movedim, swapaxes, swapdims, view_as and reshape_as as torch's") {
  Tensor x = grid234();
  const std::vector<real> moved = {0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11, 23};
  CHECK(x.movedim(0, 2).shape() == Shape{3, 4, 2});
  CHECK(x.movedim(0, 2).to_vector() == moved);
  CHECK(x.movedim({0, 1}, {2, 0}).shape() == Shape{3, 4, 2});
  CHECK(x.movedim({0, 1}, {2, 0}).to_vector() == moved);
  CHECK(x.movedim(-1, 0).shape() == Shape{4, 2, 3});
  CHECK(movedim(x, 1, 1).to_vector() == x.to_vector());
  CHECK(x.swapaxes(0, 2).to_vector() ==
        std::vector<real>{0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23});
  CHECK(x.swapdims(0, 2).to_vector() == x.transpose(0, 2).to_vector());
  CHECK(x.view_as(zeros({6, 4})).shape() == Shape{6, 4});
  CHECK(x.reshape_as(zeros({24})).shape() == Shape{24});
  CHECK(contains(error_of([&] { x.view_as(zeros({5})); }), "reshape"));

  Tensor p = randn({2, 3, 4}).requires_grad_();
  CHECK(p.movedim(0, 2).grad_fn()->name() == "PermuteBackward0");
  CHECK(p.swapaxes(0, 1).grad_fn()->name() == "TransposeBackward0");
  CHECK(p.view_as(zeros({24})).grad_fn()->name() == "ViewBackward0");
  CHECK(contains(error_of([&] { x.movedim({0, 0}, {1, 2}); }), "movedim: repeated dim in `source` ([0,0])"));
  CHECK(contains(error_of([&] { x.movedim({0, 1}, {2, 2}); }), "movedim: repeated dim in `destination` ([2,2])"));
  CHECK(contains(error_of([&] { x.movedim({0, 1}, {1}); }),
                 "movedim: Invalid source or destination dims: source ([0,1] dims) should contain the same number of dims as destination ([1] dims)"));
  CHECK(contains(error_of([&] { x.movedim(0, 3); }), "movedim"));
}

// Every op libtorch returns as a view, as heed has it: a shared view (writes reach x) or a
// copy whose in-place ops raise, naming the op (core/tensor.h, "Views").
TEST_CASE("sweep: each libtorch view op shares its base's storage or refuses in-place writes") {
  using indexing::Slice;
  struct ViewOp {
    const char* name;       // what the copy's error names (unused for a shared view)
    bool shares;
    Tensor (*make)(const Tensor&);
  };
  const std::vector<ViewOp> ops = {
      {"view", true, [](const Tensor& x) { return x.view({6, 4}); }},
      {"reshape", true, [](const Tensor& x) { return x.reshape({-1}); }},
      {"view_as", true, [](const Tensor& x) { return x.view_as(zeros({4, 6})); }},
      {"reshape_as", true, [](const Tensor& x) { return x.reshape_as(zeros({24})); }},
      {"flatten", true, [](const Tensor& x) { return x.flatten(1); }},
      {"unsqueeze", true, [](const Tensor& x) { return x.unsqueeze(1); }},
      {"squeeze", true, [](const Tensor& x) { return x.unsqueeze(0).squeeze(0); }},
      {"detach", true, [](const Tensor& x) { return x.detach(); }},
      {"narrow", true, [](const Tensor& x) { return x.narrow(0, 1, 1); }},
      {"slice", true, [](const Tensor& x) { return slice(x, 0, 1, 2); }},
      {"select", true, [](const Tensor& x) { return x.select(0, 1); }},
      {"x[i]", true, [](const Tensor& x) { return x[1]; }},
      {"x[i][j]", true, [](const Tensor& x) { return x[1][2]; }},
      {"chunk", true, [](const Tensor& x) { return x.chunk(2, 0)[1]; }},
      {"split", true, [](const Tensor& x) { return x.split(1, 0)[1]; }},
      {"split_with_sizes", true, [](const Tensor& x) { return x.split({1, 1}, 0)[1]; }},
      {"unbind", true, [](const Tensor& x) { return x.unbind(0)[1]; }},
      {"narrow", false, [](const Tensor& x) { return x.narrow(1, 0, 2); }},
      {"slice", false, [](const Tensor& x) { return slice(x, 1, 0, 3, 2); }},
      {"select", false, [](const Tensor& x) { return x.select(2, 0); }},
      {"chunk", false, [](const Tensor& x) { return x.chunk(2, 2)[0]; }},
      {"split", false, [](const Tensor& x) { return x.split(2, 1)[0]; }},
      {"split_with_sizes", false, [](const Tensor& x) { return x.split({1, 3}, 2)[1]; }},
      {"unbind", false, [](const Tensor& x) { return x.unbind(1)[0]; }},
      {"index", false, [](const Tensor& x) { return x.index({Slice(), 0}); }},
      {"index", true, [](const Tensor& x) { return x.index({1}); }},  // a block: select(0, 1)
      {"index", true, [](const Tensor& x) { return x.index({1, Slice(1, 3)}); }},
      {"index", false, [](const Tensor& x) { return x.index({1, Slice(), 2}); }},
      {"transpose", false, [](const Tensor& x) { return x.transpose(0, 1); }},
      {"transpose", false, [](const Tensor& x) { return x[0].t(); }},
      {"permute", false, [](const Tensor& x) { return x.permute({2, 0, 1}); }},
      {"movedim", false, [](const Tensor& x) { return x.movedim(0, 2); }},
      {"swapaxes", false, [](const Tensor& x) { return x.swapaxes(0, 2); }},
      {"swapdims", false, [](const Tensor& x) { return x.swapdims(1, 2); }},
      {"expand", false, [](const Tensor& x) { return x.expand({2, 2, 3, 4}); }},
      {"expand", false, [](const Tensor& x) { return x[0].expand_as(zeros({5, 3, 4})); }},
  };
  for (const ViewOp& op : ops) {
    CAPTURE(op.name);
    CAPTURE(op.shares);
    Tensor x = grid234();
    Tensor y = op.make(x);
    if (op.shares) {
      CHECK(y.impl()->storage == x.impl()->storage);
      const uint64_t v = x.version();
      y.fill_(-1);
      CHECK(x.version() > v);  // the base's counter: a backward that saved x now refuses
      CHECK(heed::sum(x.eq(-1)).item() == real(y.numel()));
    } else {
      const std::vector<real> before = x.to_vector();
      CHECK(contains(error_of([&] { y.fill_(-1); }), std::string("fill_: this tensor is a copy made by ") + op.name));
      CHECK(contains(error_of([&] { y.add_(1); }), std::string("add_: this tensor is a copy made by ") + op.name));
      CHECK(x.to_vector() == before);
    }
  }
}

TEST_CASE("sweep: the ATen-order losses default as ATen's: torch::nll_loss(logp, y)") {
  Tensor lp = log_softmax(from_vector({1, 2, 3, 0.5f, -1, 2}, {2, 3}), 1);
  IndexTensor y({2, 0});
  CHECK(nll_loss(lp, y).item() == doctest::Approx(1.0744585990905762));  // PyTorch 1.13
  CHECK(nll_loss(lp, y, {}, Reduction::Sum).item() == doctest::Approx(2.1489171981811523));
  Tensor logits = from_vector({1, 2, 3, 0.5f, -1, 2}, {2, 3});
  CHECK(cross_entropy_loss(logits, y).item() == doctest::Approx(1.0744585990905762));
  Tensor a = from_vector({1, 2}, {2}), b = from_vector({0, 4}, {2});
  CHECK(mse_loss(a, b).item() == doctest::Approx(2.5));
  Tensor p = from_vector({0.25f, 0.5f}, {2}), t = from_vector({0, 1}, {2});
  CHECK(binary_cross_entropy(p, t).item() == doctest::Approx((std::log(4.0 / 3) + std::log(2.0)) / 2));
  CHECK(binary_cross_entropy_with_logits(zeros({2}), t).item() == doctest::Approx(std::log(2.0)));
}

namespace {
struct Five : data::datasets::Dataset<Five, data::Example<Tensor, IndexTensor>> {
  ExampleType get(size_t i) override { return {full({2}, real(i)), tensor(int64_t(i))}; }
  std::optional<size_t> size() const override { return 5; }
};
}  // namespace

TEST_CASE("sweep: dataset.get_batch(0) is a batch of one, as libtorch's; IndexTensor::clone()") {
  auto ds = Five().map(data::transforms::Stack<>());
  auto one = ds.get_batch(3);
  CHECK(one.data.shape() == Shape{1, 2});
  CHECK(one.data.to_vector() == std::vector<real>{3, 3});
  CHECK(one.target.item<int>() == 3);
  CHECK(Five().get_batch(4).size() == 1);
  IndexTensor ids({1, 2, 3});
  IndexTensor c = ids.clone();
  c.fill_(0);
  CHECK(ids.vec() == std::vector<int64_t>{1, 2, 3});
  CHECK(c.vec() == std::vector<int64_t>{0, 0, 0});
}
