// test_views_write.cpp - writes through views (core/tensor.h, "Views"): a shared view
// (narrow/slice/chunk along dim 0, select(0, i), x[i], views of these) writes its base and
// follows it; a view's copy (transpose, permute, narrow along a later dim, ...) refuses every
// in-place op, naming the op; the version counter and grad mode rules hold through views.
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/tensor_index.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/init.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;

static bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// x = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
static Tensor grid43() { return arange(12).reshape({4, 3}); }

static std::vector<real> row_values(const Tensor& x, int64_t i) { return x[i].to_vector(); }

// ---------------------------------------------------------------- shared views write their base

TEST_CASE("views: fill_, zero_, copy_, add_, += and mul_ through narrow(0), select(0) and x[i] write the base") {
  Tensor x = grid43();
  x[1].fill_(7);
  CHECK(row_values(x, 1) == std::vector<real>{7, 7, 7});
  x.select(0, 2).zero_();
  CHECK(row_values(x, 2) == std::vector<real>{0, 0, 0});
  x.narrow(0, 0, 1).copy_(from_vector({-1, -2, -3}, {1, 3}));
  CHECK(row_values(x, 0) == std::vector<real>{-1, -2, -3});
  x[3].add_(ones({3}));
  CHECK(row_values(x, 3) == std::vector<real>{10, 11, 12});
  Tensor r = x[3];
  r += 1;
  CHECK(row_values(x, 3) == std::vector<real>{11, 12, 13});
  x.narrow(0, 1, 2).mul_(2);
  CHECK(row_values(x, 1) == std::vector<real>{14, 14, 14});
  CHECK(row_values(x, 2) == std::vector<real>{0, 0, 0});
  heed::slice(x, 0, 3, 4).sub_(1);
  CHECK(row_values(x, 3) == std::vector<real>{10, 11, 12});
  x.chunk(2, 0)[1].fill_(5);  // rows 2 and 3
  CHECK(row_values(x, 2) == std::vector<real>{5, 5, 5});
  CHECK(row_values(x, 3) == std::vector<real>{5, 5, 5});
}

TEST_CASE("views: x.index({...}) of one block of x shares x (writes reach x, the version counter refuses a stale backward); other regions are copies that refuse writes") {
  using indexing::Slice;
  Tensor x = arange(24).reshape({2, 3, 4});
  x.index({1}).fill_(7);  // libtorch's select(0, 1)
  CHECK(x.at({1, 0, 0}) == 7);
  CHECK(x.at({1, 2, 3}) == 7);
  CHECK(x.at({0, 2, 3}) == 11);
  x.index({0, Slice(1, 3)}).zero_();  // rows 1 and 2 of x[0]: one block
  CHECK(x.at({0, 1, 0}) == 0);
  CHECK(x.at({0, 2, 3}) == 0);
  CHECK(x.at({0, 0, 3}) == 3);
  x.index({Slice(0, 1), 0, 2}).add_(5);  // one element
  CHECK(x.at({0, 0, 2}) == 7);
  Tensor row = x.index({0, 0});
  row.copy_(from_vector({-1, -2, -3, -4}, {4}));
  CHECK(x.at({0, 0, 3}) == -4);
  x.index({0}).index({0, Slice(0, 2)}).fill_(9);  // an index of a shared index: shared
  CHECK(x.at({0, 0, 1}) == 9);
  CHECK(x.index({1}).to_vector() == x[1].to_vector());
  CHECK(contains(error_of([&] { x.index({Slice(), 1}).fill_(1); }), "fill_: this tensor is a copy made by index"));
  CHECK(contains(error_of([&] { x.index({0, Slice(), 1}).fill_(1); }), "fill_: this tensor is a copy made by index"));
  CHECK(contains(error_of([&] { x.index({0, Slice(0, 3, 2)}).fill_(1); }), "fill_: this tensor is a copy made by index"));
  CHECK(contains(error_of([&] { x.transpose(0, 1).index({0}).fill_(1); }), "fill_: this tensor is a copy made by transpose"));
  // the version counter is the storage's: a backward that saved x refuses after a write through x.index({i})
  Tensor w = randn({3, 4}).requires_grad_();
  Tensor h = w * 2;  // a non-leaf
  Tensor y = (h * h).sum();  // saves h
  {
    NoGradGuard no_grad;
    h.index({1}).fill_(0);
  }
  CHECK(contains(error_of([&] { y.backward(); }), "modified by an inplace operation"));
  // and under grad mode the gradient of a shared index is dy put back into x's shape
  Tensor a = randn({3, 4}).requires_grad_();
  (a.index({2}) * 3).sum().backward();
  CHECK(a.grad().index({2}).to_vector() == std::vector<real>{3, 3, 3, 3});
  CHECK(a.grad().index({0}).to_vector() == std::vector<real>{0, 0, 0, 0});
}

TEST_CASE("views: x[i][j] of a 3-D tensor, and view/reshape of a narrow, write the base") {
  Tensor x = arange(24).reshape({2, 3, 4});
  x[1][2].fill_(-1);  // x[1] is (3, 4) with a leading dim of 3: its [2] is a block too
  CHECK(x.at({1, 2, 0}) == -1);
  CHECK(x.at({1, 2, 3}) == -1);
  CHECK(x.at({1, 1, 3}) == 19);
  CHECK(x.at({0, 2, 0}) == 8);
  x.narrow(0, 1, 1).narrow(1, 0, 1).fill_(0);  // dim 1 after a size-1 dim: a block
  CHECK(x.at({1, 0, 0}) == 0);
  CHECK(x.at({1, 0, 3}) == 0);
  CHECK(x.at({0, 0, 1}) == 1);
  Tensor y = grid43();
  y.narrow(0, 1, 2).view({6}).fill_(9);
  CHECK(row_values(y, 1) == std::vector<real>{9, 9, 9});
  CHECK(row_values(y, 2) == std::vector<real>{9, 9, 9});
  CHECK(row_values(y, 0) == std::vector<real>{0, 1, 2});
  y.narrow(0, 2, 2).reshape({3, 2})[1].copy_(from_vector({40, 41}, {2}));  // elements 8 and 9
  CHECK(y.at({2, 2}) == 40);
  CHECK(y.at({3, 0}) == 41);
  y.narrow(0, 0, 1).squeeze(0).unsqueeze(1).zero_();
  CHECK(row_values(y, 0) == std::vector<real>{0, 0, 0});
  CHECK(y[3].detach().data() == y.data() + 9);  // the view's data() is the base's, offset
}

TEST_CASE("views: a shared view follows later writes to its base") {
  Tensor x = grid43();
  Tensor r = x[2], n = x.narrow(0, 1, 2), v = x.narrow(0, 1, 2).view({6});
  x.fill_(3);
  CHECK(r.to_vector() == std::vector<real>{3, 3, 3});
  x.copy_(arange(12).reshape({4, 3}) * 10);
  CHECK(r.to_vector() == std::vector<real>{60, 70, 80});
  CHECK(n.sum().item() == 30 + 40 + 50 + 60 + 70 + 80);
  CHECK(v.at({5}) == 80);
  CHECK(r.version() == x.version());
}

// ---------------------------------------------------------------- copies of views refuse writes

TEST_CASE("views: every in-place op on a view's copy raises, naming the op and the view") {
  Tensor x = grid43();
  const std::vector<real> before = x.to_vector();
  const std::string fill = error_of([&] { x.narrow(1, 0, 2).fill_(7); });
  CHECK(contains(fill, "fill_: this tensor is a copy made by narrow(dim 1), not a view of its "
                       "input (heed copies views that are not contiguous blocks); write into the "
                       "original with index_put_ or narrow along dim 0, or clone() first"));
  CHECK(contains(error_of([&] { x.select(1, 0).zero_(); }), "zero_: this tensor is a copy made by select(dim 1)"));
  CHECK(contains(error_of([&] { x.t().copy_(zeros({3, 4})); }), "copy_: this tensor is a copy made by transpose"));
  CHECK(contains(error_of([&] { x.transpose(0, 1).add_(1); }), "add_: this tensor is a copy made by transpose"));
  CHECK(contains(error_of([&] { x.permute({1, 0}).mul_(2); }), "mul_: this tensor is a copy made by permute"));
  CHECK(contains(error_of([&] { heed::slice(x, 0, 0, 4, 2).sub_(1); }), "sub_: this tensor is a copy made by slice(dim 0)"));
  CHECK(contains(error_of([&] { x.chunk(3, 1)[0].div_(2); }), "div_: this tensor is a copy made by chunk(dim 1)"));
  CHECK(contains(error_of([&] { x.expand({2, 4, 3}).exp_(); }), "exp_: this tensor is a copy made by expand"));
  CHECK(contains(error_of([&] { x.narrow(1, 1, 1).clamp_(0, 1); }), "clamp_: this tensor is a copy made by narrow"));
  CHECK(contains(error_of([&] { x.index({indexing::Slice(), 0}).fill_(1); }), "fill_: this tensor is a copy made by index"));
  CHECK(contains(error_of([&] { Tensor t = x.t(); t += 1; }), "+=: this tensor is a copy made by transpose"));
  CHECK(contains(error_of([&] { Tensor t = x.t(); t -= ones({3, 4}); }), "-=: this tensor is a copy"));
  CHECK(contains(error_of([&] { Tensor t = x.t(); t *= 2; }), "*=: this tensor is a copy"));
  CHECK(contains(error_of([&] { Tensor t = x.t(); t /= 2; }), "/=: this tensor is a copy"));
  CHECK(contains(error_of([&] { x.t().index_put_({0}, 1); }), "index_put_: this tensor is a copy made by transpose"));
  CHECK(contains(error_of([&] { x.t().view({12}).fill_(1); }), "fill_: this tensor is a copy made by transpose"));
  CHECK(contains(error_of([&] { x.t()[0].fill_(1); }), "fill_: this tensor is a copy made by transpose"));
  CHECK(contains(error_of([&] { x.t().narrow(0, 0, 1).fill_(1); }), "fill_: this tensor is a copy made by transpose"));
  CHECK(contains(error_of([&] { x.t().detach().fill_(1); }), "fill_: this tensor is a copy made by transpose"));
  CHECK(contains(error_of([&] { nn::init::uniform_(x.t(), 0, 1); }), "uniform_: this tensor is a copy made by transpose"));
  CHECK(contains(error_of([&] { nn::init::normal_(x.t(), 0, 1); }), "normal_: this tensor is a copy"));
  CHECK(contains(error_of([&] { nn::init::constant_(x.t(), 1); }), "fill_: this tensor is a copy"));
  CHECK(contains(error_of([&] { nn::init::orthogonal_(x.t(), 1); }), "orthogonal_: this tensor is a copy"));
  {
    NoGradGuard no_grad;  // grad mode has nothing to do with it: the write would be lost
    CHECK(contains(error_of([&] { x.narrow(1, 0, 1).fill_(7); }), "fill_: this tensor is a copy"));
  }
  CHECK(x.to_vector() == before);
}

TEST_CASE("views: clone(), contiguous() and ops' outputs of a view's copy are written freely") {
  Tensor x = grid43();
  Tensor c = x.t().clone();
  c.fill_(1);
  Tensor k = x.t().contiguous();
  k.fill_(2);
  CHECK(k.sum().item() == 24);
  Tensor s = x.t() * 1;
  s += 1;
  CHECK(s.at({0, 1}) == 4);
  CHECK(x.to_vector() == grid43().to_vector());
}

// ---------------------------------------------------------------- version counter and grad mode

TEST_CASE("views: a write through a shared view makes a backward that saved the base refuse") {
  Tensor w = from_vector({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  Tensor base = w * 1;       // an op's output
  Tensor y = base * base;    // saves base
  {
    NoGradGuard no_grad;
    base.detach()[1].fill_(0);  // writes base's storage through a view of its detach()
  }
  CHECK(base.at({1, 0}) == 0);
  CHECK(contains(error_of([&] { y.sum().backward(); }), "modified by an inplace operation"));
  Tensor x = from_vector({1, 2, 3, 4}, {2, 2}).requires_grad_();
  Tensor z = x.exp();  // saves its output
  {
    NoGradGuard no_grad;
    z.narrow(0, 1, 1).mul_(2);
  }
  CHECK(contains(error_of([&] { z.sum().backward(); }), "modified by an inplace operation"));
}

TEST_CASE("views: under grad mode a write through a view in a graph is refused, naming the view op") {
  Tensor w = zeros({3, 2}).requires_grad_();
  const std::string leaf = error_of([&] { w[1].fill_(7); });
  CHECK(contains(leaf, "fill_: this tensor is a view made by select(dim 0) sharing its input's storage"));
  CHECK(contains(leaf, "heed::NoGradGuard"));
  CHECK(contains(error_of([&] { w.narrow(0, 0, 2).add_(1); }), "add_: this tensor is a view made by narrow(dim 0)"));
  CHECK(contains(error_of([&] { Tensor r = w[0]; r += 1; }), "+=: this tensor is a view made by select(dim 0)"));
  Tensor h = w * 2;  // not a leaf
  CHECK(contains(error_of([&] { h[0].copy_(ones({2})); }), "clone() first"));
  CHECK(w.sum().item() == 0);
  CHECK(h.sum().item() == 0);
  CHECK(w.version() == 0);
}

TEST_CASE("views: under NoGradGuard a write to a parameter's row writes the parameter") {
  Tensor w = zeros({3, 2}).requires_grad_();
  {
    NoGradGuard no_grad;
    w[1].fill_(7);
    w.narrow(0, 2, 1) += 1;
  }
  CHECK(w.to_vector() == std::vector<real>{0, 0, 7, 7, 1, 1});
  CHECK(w.version() == 2);
  CHECK(w.is_leaf());
  CHECK(w.requires_grad());
  (w * w).sum().backward();  // the graph is recorded after the writes: fine
  CHECK(w.grad().to_vector() == std::vector<real>{0, 0, 14, 14, 2, 2});
}

TEST_CASE("views: a shared view's gradient is its block of the base's, as before") {
  Tensor x = from_vector({1, 2, 3, 4, 5, 6}, {3, 2}).requires_grad_();
  (x[1] * 3 + x.narrow(0, 2, 1).sum() * 2).sum().backward();
  CHECK(x.grad().to_vector() == std::vector<real>{0, 0, 3, 3, 4, 4});
}

// ---------------------------------------------------------------- overlapping views (PyTorch's rule)

TEST_CASE("views: an in-place op whose input partly overlaps the written tensor raises, as PyTorch") {
  // Debian's PyTorch 1.13: each of these raises "unsupported operation: some elements of the
  // input tensor and the written-to tensor refer to a single memory location"
  const std::string tail = "are the same memory; clone() the input first";
  Tensor x = arange(6);
  CHECK(contains(error_of([&] { x.narrow(0, 1, 3).copy_(x.narrow(0, 0, 3)); }), "copy_: some elements"));
  CHECK(contains(error_of([&] { x.narrow(0, 1, 3).add_(x.narrow(0, 0, 3)); }), tail));
  CHECK(contains(error_of([&] { Tensor r = x.narrow(0, 1, 3); r += x.narrow(0, 0, 3); }), "+=: "));
  CHECK(contains(error_of([&] { x.add_(x[0]); }), "add_: "));
  CHECK(contains(error_of([&] { x.index_put_({indexing::Slice(0, 2)}, x.narrow(0, 1, 2)); }), "index_put_: "));
  CHECK(x.to_vector() == std::vector<real>{0, 1, 2, 3, 4, 5});  // nothing was written
  // the same elements, or disjoint blocks of one storage, are fine (PyTorch's results)
  x.narrow(0, 0, 3).add_(x.narrow(0, 0, 3));
  CHECK(x.to_vector() == std::vector<real>{0, 2, 4, 3, 4, 5});
  x.narrow(0, 0, 3).mul_(x.narrow(0, 3, 3));
  CHECK(x.to_vector() == std::vector<real>{0, 8, 20, 3, 4, 5});
  x.view({2, 3})[0].copy_(x.narrow(0, 0, 3));  // the same elements: a no-op
  CHECK(x.to_vector() == std::vector<real>{0, 8, 20, 3, 4, 5});
  x.narrow(0, 3, 3).copy_(x.narrow(0, 0, 3));
  CHECK(x.to_vector() == std::vector<real>{0, 8, 20, 0, 8, 20});
  // a clone breaks the overlap
  x.narrow(0, 1, 3).copy_(x.narrow(0, 0, 3).clone());
  CHECK(x.to_vector() == std::vector<real>{0, 0, 8, 20, 8, 20});
}

TEST_CASE("views: set_grad refuses a view's copy (later accumulations would miss its input)") {
  Tensor p = zeros({2, 3}).requires_grad_();
  Tensor g = arange(6).reshape({3, 2});
  const std::string e = error_of([&] { p.set_grad(g.t()); });
  CHECK(contains(e, "set_grad: the gradient is a copy made by transpose"));
  CHECK(!p.grad().defined());  // the refused call left the gradient as it was
  p.set_grad(g.t().clone());   // a clone is a tensor of its own: accepted, and accumulates
  (p * 2).sum().backward();
  CHECK(p.grad().to_vector() == std::vector<real>{2, 4, 6, 3, 5, 7});
  p.set_grad(zeros({4, 3}).narrow(0, 1, 2));  // a shared block view is a view: accepted
  CHECK(p.grad().shape() == Shape{2, 3});
}
