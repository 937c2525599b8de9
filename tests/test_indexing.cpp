// test_indexing.cpp - index_select and gather: values against hand-computed ones and naive
// loops, scatter-add backward with repeated ids (also at sizes that run in parallel), errors.
#include <random>
#include <string>

#include <heed/autograd/engine/node.h>
#include <heed/autograd/ops/indexing.h>
#include <heed/autograd/ops/views.h>
#include "helpers.h"

using namespace heed;
using heed::test::random_ids;
using heed::test::error_of;
using Vec = std::vector<real>;

static bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

TEST_CASE("indexing: index_select values along dims 0, 1 and -1") {
  Tensor x = arange(12).reshape({3, 4});  // [[0 1 2 3] [4 5 6 7] [8 9 10 11]]
  Tensor r = index_select(x, 0, IndexTensor({2, 0, 2}));
  CHECK(r.shape() == Shape{3, 4});
  CHECK(r.to_vector() == Vec{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11});
  CHECK(index_select(x, 1, IndexTensor({3, 1})).to_vector() == Vec{3, 1, 7, 5, 11, 9});
  CHECK(index_select(x, -1, IndexTensor({0})).to_vector() == Vec{0, 4, 8});
  CHECK(index_select(x, 0, IndexTensor(std::vector<int64_t>{})).shape() == Shape{0, 4});

  Tensor y = arange(24).reshape({2, 3, 4});
  Tensor s = index_select(y, 1, IndexTensor({1, 1, 0, 2}));  // (2, 4, 4)
  CHECK(s.shape() == Shape{2, 4, 4});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t k = 0; k < 4; ++k) {
      CHECK(s.at({i, 0, k}) == y.at({i, 1, k}));
      CHECK(s.at({i, 1, k}) == y.at({i, 1, k}));
      CHECK(s.at({i, 2, k}) == y.at({i, 0, k}));
      CHECK(s.at({i, 3, k}) == y.at({i, 2, k}));
    }
}

TEST_CASE("indexing: index_select backward adds repeated ids") {
  Tensor table = zeros({3, 2}).requires_grad_();
  Tensor e = index_select(table, 0, IndexTensor({2, 0, 2, 2}));  // (4, 2)
  e.backward(from_vector({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}));
  // row 0 <- dy row 1; row 1 <- nothing; row 2 <- dy rows 0, 2, 3
  CHECK(table.grad().to_vector() == Vec{3, 4, 0, 0, 1 + 5 + 7, 2 + 6 + 8});
  CHECK(e.grad_fn()->op_name() == std::string("index_select"));

  Tensor x = zeros({2, 3}).requires_grad_();
  index_select(x, 1, IndexTensor({1, 1, 0})).backward(from_vector({1, 2, 3, 4, 5, 6}, {2, 3}));
  CHECK(x.grad().to_vector() == Vec{3, 1 + 2, 0, 6, 4 + 5, 0});
}

TEST_CASE("indexing: a large embedding lookup and its backward match naive loops") {
  // big enough to run in parallel; many repeated ids; integer values keep float sums exact
  for (int dim : {0, 1}) {
    CAPTURE(dim);
    const int64_t V = 300, C = 64, N = 4000;
    const Shape ts = dim == 0 ? Shape{V, C} : Shape{C, V};
    Tensor table = arange(real(V * C)).reshape(ts).detach().requires_grad_();
    const IndexTensor ids = random_ids({N}, V, 7 + dim);
    Tensor e = index_select(table, dim, ids);
    REQUIRE(e.shape() == (dim == 0 ? Shape{N, C} : Shape{C, N}));
    Tensor dy = empty(e.shape());
    for (int64_t i = 0; i < dy.numel(); ++i) dy.data()[i] = real(i % 7);
    e.backward(dy);

    bool fwd = true;
    std::vector<double> want(V * C, 0.0);  // naive scatter-add, as (V, C)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        const int64_t v = ids[n];
        const int64_t at_e = dim == 0 ? n * C + c : c * N + n;
        const int64_t at_t = dim == 0 ? v * C + c : c * V + v;
        fwd = fwd && e.data()[at_e] == table.data()[at_t];
        want[v * C + c] += dy.data()[at_e];
      }
    CHECK(fwd);
    bool bwd = true;
    for (int64_t v = 0; v < V; ++v)
      for (int64_t c = 0; c < C; ++c)
        bwd = bwd && table.grad().data()[dim == 0 ? v * C + c : c * V + v] == real(want[v * C + c]);
    CHECK(bwd);
  }
}

TEST_CASE("indexing: index_select errors name index_select") {
  Tensor x = zeros({3, 4});
  const std::string e = error_of([&] { index_select(x, 0, IndexTensor({0, 3})); });
  CHECK(starts_with(e, "index_select:"));
  CHECK(e.find("3") != std::string::npos);
  CHECK(starts_with(error_of([&] { index_select(x, 1, IndexTensor({4})); }), "index_select:"));
  CHECK(starts_with(error_of([&] { index_select(x, 0, IndexTensor({-1})); }), "index_select:"));
  CHECK(starts_with(error_of([&] { index_select(x, 0, IndexTensor({0, 1}, {1, 2})); }),
                    "index_select:"));
  CHECK(starts_with(error_of([&] { index_select(x, 2, IndexTensor({0})); }), "index_select:"));
  CHECK_NOTHROW(index_select(x, 1, IndexTensor({3, 0})));
}

TEST_CASE("indexing: gather values along dims 0 and 1 (torch.gather's examples)") {
  Tensor x = from_vector({1, 2, 3, 4}, {2, 2});
  CHECK(gather(x, 1, IndexTensor({0, 0, 1, 0}, {2, 2})).to_vector() == Vec{1, 1, 4, 3});
  CHECK(gather(x, 0, IndexTensor({0, 1, 1, 0}, {2, 2})).to_vector() == Vec{1, 4, 3, 2});
  // index smaller than x outside dim, longer along dim
  Tensor m = arange(12).reshape({3, 4});  // [[0 1 2 3] [4 5 6 7] [8 9 10 11]]
  Tensor g = gather(m, 1, IndexTensor({3, 3, 0, 1, 2, 1}, {2, 3}));
  CHECK(g.shape() == Shape{2, 3});
  CHECK(g.to_vector() == Vec{3, 3, 0, 5, 6, 5});
  CHECK(gather(m, 0, IndexTensor({2, 0, 1, 1, 2, 0, 0, 0}, {4, 2})).to_vector() ==
        Vec{8, 1, 4, 5, 8, 1, 0, 1});
  // the cross-entropy pick: one column per row
  CHECK(gather(m, -1, IndexTensor({2, 0, 3}, {3, 1})).to_vector() == Vec{2, 4, 11});
}

TEST_CASE("indexing: gather backward adds repeated targets") {
  Tensor m = zeros({3, 4}).requires_grad_();
  Tensor g = gather(m, 1, IndexTensor({3, 3, 0, 1, 2, 1}, {2, 3}));
  g.backward(from_vector({1, 2, 3, 4, 5, 6}, {2, 3}));
  CHECK(m.grad().to_vector() == Vec{3, 0, 0, 1 + 2, 0, 4 + 6, 5, 0, 0, 0, 0, 0});
  Tensor a = zeros({3, 2}).requires_grad_();
  gather(a, 0, IndexTensor({2, 0, 2, 0, 1, 0}, {3, 2})).backward(from_vector({1, 2, 3, 4, 5, 6}, {3, 2}));
  CHECK(a.grad().to_vector() == Vec{0, 2 + 4 + 6, 5, 0, 1 + 3, 0});

  // an empty index still joins the graph, and sends back zeros
  Tensor x = ones({2, 3}).requires_grad_();
  Tensor e = gather(x, 1, IndexTensor(std::vector<int64_t>{}, {2, 0}));
  CHECK(e.shape() == Shape{2, 0});
  REQUIRE(e.requires_grad());
  e.backward(zeros({2, 0}));
  CHECK(x.grad().to_vector() == Vec(6, 0));
}

TEST_CASE("indexing: a large gather and its backward match naive loops along each dim") {
  const Shape xs{16, 40, 64};
  Tensor x = arange(real(xs.numel())).reshape(xs).detach().requires_grad_();
  for (int d = 0; d < 3; ++d) {
    CAPTURE(d);
    Shape is{15, 39, 60};
    is[d] = xs[d] * 2;
    const IndexTensor idx = random_ids(is, xs[d], 30 + d);
    x.set_grad(Tensor());
    Tensor y = gather(x, d, idx);
    REQUIRE(y.shape() == is);
    Tensor dy = empty(is);
    for (int64_t i = 0; i < dy.numel(); ++i) dy.data()[i] = real(i % 5);
    y.backward(dy);

    std::vector<double> want(xs.numel(), 0.0);
    bool fwd = true;
    for (int64_t i = 0; i < is[0]; ++i)
      for (int64_t j = 0; j < is[1]; ++j)
        for (int64_t k = 0; k < is[2]; ++k) {
          const int64_t p = (i * is[1] + j) * is[2] + k;
          int64_t c[3] = {i, j, k};
          c[d] = idx[p];
          const int64_t q = (c[0] * xs[1] + c[1]) * xs[2] + c[2];
          fwd = fwd && y.data()[p] == x.data()[q];
          want[q] += dy.data()[p];
        }
    CHECK(fwd);
    bool bwd = true;
    for (int64_t q = 0; q < xs.numel(); ++q) bwd = bwd && x.grad().data()[q] == real(want[q]);
    CHECK(bwd);
  }
}

TEST_CASE("indexing: gather errors name gather") {
  Tensor m = zeros({3, 4});
  const std::string e = error_of([&] { gather(m, 1, IndexTensor({0, 4}, {2, 1})); });
  CHECK(starts_with(e, "gather:"));
  CHECK(e.find("4") != std::string::npos);
  CHECK(starts_with(error_of([&] { gather(m, 0, IndexTensor({-1}, {1, 1})); }), "gather:"));
  CHECK(starts_with(error_of([&] { gather(m, 1, IndexTensor({0, 1})); }), "gather:"));  // rank
  CHECK(starts_with(error_of([&] { gather(m, 1, IndexTensor({0, 0, 0, 0}, {4, 1})); }),
                    "gather:"));  // 4 rows > 3 outside dim
  CHECK(starts_with(error_of([&] { gather(m, 2, IndexTensor({0}, {1, 1})); }), "gather:"));
  CHECK_NOTHROW(gather(m, 0, IndexTensor({2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, {5, 2})));
}
