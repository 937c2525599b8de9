// test_shape_ops.cpp - transpose, permute, slice, narrow, cat, stack: values against hand-
// computed ones and naive loops, gradients that must land in exact places, and errors.
#include <string>

#include <heed/autograd/engine/node.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/views.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;
using Vec = std::vector<real>;

static bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

TEST_CASE("shape_ops: transpose and permute values") {
  Tensor x = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor t = x.transpose(0, 1);
  CHECK(t.shape() == Shape{3, 2});
  CHECK(t.to_vector() == Vec{1, 4, 2, 5, 3, 6});
  CHECK(t.data() != x.data());  // a copy, not a view
  CHECK(transpose(x, -1, -2).to_vector() == Vec{1, 4, 2, 5, 3, 6});
  CHECK(transpose(x, 1, 1).to_vector() == x.to_vector());

  Tensor y = arange(24).reshape({2, 3, 4});
  Tensor p = y.permute({2, 0, 1});  // p[k][i][j] = y[i][j][k] = 12i + 4j + k
  CHECK(p.shape() == Shape{4, 2, 3});
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) CHECK(p.at({k, i, j}) == real(12 * i + 4 * j + k));
  CHECK(permute(y, {-1, -3, -2}).to_vector() == p.to_vector());
  CHECK(permute(y, {0, 1, 2}).to_vector() == y.to_vector());
}

TEST_CASE("shape_ops: transpose of the last two dims of (B,H,T,D) matches a naive loop") {
  // sizes that are not multiples of the 32x32 tile, so ragged tiles are covered; large
  // enough that the copy runs in parallel
  for (Shape s : {Shape{2, 3, 70, 45}, Shape{1, 1, 33, 1}, Shape{4, 8, 64, 64}}) {
    CAPTURE(s);
    const int64_t B = s[0], H = s[1], T = s[2], D = s[3];
    Tensor x = arange(real(s.numel())).reshape(s);
    Tensor y = x.transpose(-1, -2);  // (B, H, D, T)
    REQUIRE(y.shape() == Shape{B, H, D, T});
    bool same = true;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < D; ++d)
          for (int64_t t = 0; t < T; ++t)
            same = same && y.data()[((b * H + h) * D + d) * T + t] ==
                               x.data()[((b * H + h) * T + t) * D + d];
    CHECK(same);
    CHECK(x.transpose(2, 3).transpose(2, 3).to_vector() == x.to_vector());
  }
  // (B,T,H,D) -> (B,H,T,D), the other permute attention uses
  Tensor z = arange(real(2 * 5 * 3 * 4)).reshape({2, 5, 3, 4});
  Tensor w = z.permute({0, 2, 1, 3});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t t = 0; t < 5; ++t)
        for (int64_t d = 0; d < 4; ++d) CHECK(w.at({b, h, t, d}) == z.at({b, t, h, d}));
}

TEST_CASE("shape_ops: transpose and permute backward move the gradient back") {
  Tensor x = arange(6).reshape({2, 3}).detach().requires_grad_();
  Tensor y = x.transpose(0, 1);  // (3, 2)
  y.backward(from_vector({10, 40, 20, 50, 30, 60}, {3, 2}));
  CHECK(x.grad().to_vector() == Vec{10, 20, 30, 40, 50, 60});

  Tensor a = zeros({2, 3, 4}).requires_grad_();
  Tensor p = a.permute({1, 2, 0});  // (3, 4, 2)
  p.backward(arange(24).reshape({3, 4, 2}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) CHECK(a.grad().at({i, j, k}) == real(8 * j + 2 * k + i));
}

TEST_CASE("shape_ops: permute errors") {
  Tensor y = zeros({2, 3, 4});
  CHECK(starts_with(error_of([&] { y.permute({0, 1}); }), "permute:"));
  CHECK(starts_with(error_of([&] { y.permute({0, 1, 1}); }), "permute:"));
  CHECK(starts_with(error_of([&] { y.permute({0, 2, -1}); }), "permute:"));  // -1 is 2
  CHECK(starts_with(error_of([&] { y.permute({0, 1, 3}); }), "permute:"));
  CHECK(starts_with(error_of([&] { y.transpose(0, 3); }), "transpose:"));
}

TEST_CASE("shape_ops: slice follows Python slicing") {
  Tensor x = arange(10);
  CHECK(slice(x, 0, 2, 8, 3).to_vector() == Vec{2, 5});
  CHECK(slice(x, 0, -3, 10).to_vector() == Vec{7, 8, 9});
  CHECK(slice(x, 0, -100, 100, 4).to_vector() == Vec{0, 4, 8});
  CHECK(slice(x, 0, 1, -7).to_vector() == Vec{1, 2});
  CHECK(slice(x, 0, 7, 3).shape() == Shape{0});  // empty, not an error
  CHECK(slice(x, 0, 12, 20).shape() == Shape{0});
  CHECK(slice(x, -1, 0, 10, 20).to_vector() == Vec{0});

  Tensor m = arange(12).reshape({3, 4});  // [[0 1 2 3] [4 5 6 7] [8 9 10 11]]
  CHECK(slice(m, 1, 1, 4, 2).to_vector() == Vec{1, 3, 5, 7, 9, 11});
  CHECK(slice(m, 0, -2, 3).to_vector() == Vec{4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(slice(m, -1, -1, 4).shape() == Shape{3, 1});
  CHECK(slice(m, -1, -1, 4).to_vector() == Vec{3, 7, 11});

  CHECK(starts_with(error_of([&] { slice(m, 1, 0, 4, 0); }), "slice:"));
  CHECK(starts_with(error_of([&] { slice(m, 1, 0, 4, -1); }), "slice:"));
  CHECK(starts_with(error_of([&] { slice(m, 2, 0, 1); }), "slice:"));
  CHECK(starts_with(error_of([&] { slice(scalar_tensor(1), 0, 0, 1); }), "slice:"));
}

TEST_CASE("shape_ops: slice backward puts dy at the sliced places and zeros elsewhere") {
  Tensor m = zeros({3, 4}).requires_grad_();
  Tensor y = slice(m, 1, 1, 4, 2);  // columns 1 and 3
  y.backward(from_vector({1, 2, 3, 4, 5, 6}, {3, 2}));
  CHECK(m.grad().to_vector() == Vec{0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6});
  CHECK(y.grad_fn()->op_name() == std::string("slice"));
}

TEST_CASE("shape_ops: narrow values, backward and errors") {
  Tensor m = arange(12).reshape({3, 4});
  CHECK(narrow(m, 0, 1, 2).to_vector() == Vec{4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(narrow(m, -1, 2, 2).to_vector() == Vec{2, 3, 6, 7, 10, 11});
  CHECK(narrow(m, 1, 4, 0).shape() == Shape{3, 0});

  Tensor a = zeros({3, 4}).requires_grad_();
  sum(narrow(a, 0, 1, 1)).backward();
  CHECK(a.grad().to_vector() == Vec{0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0});

  const std::string e = error_of([&] { narrow(m, 1, 3, 2); });
  CHECK(starts_with(e, "narrow:"));
  CHECK(e.find("(3,4)") != std::string::npos);
  CHECK(e.find("dim 1") != std::string::npos);
  CHECK(starts_with(error_of([&] { narrow(m, 0, -1, 1); }), "narrow:"));
  CHECK(starts_with(error_of([&] { narrow(m, 0, 0, -1); }), "narrow:"));
  CHECK(starts_with(error_of([&] { narrow(m, 2, 0, 1); }), "narrow:"));
}

TEST_CASE("shape_ops: cat values along each dim") {
  Tensor a = from_vector({1, 2, 3, 4}, {2, 2});
  Tensor b = from_vector({5, 6}, {1, 2});
  Tensor c = from_vector({7, 8, 9, 10, 11, 12}, {2, 3});
  CHECK(cat({a, b}, 0).shape() == Shape{3, 2});
  CHECK(cat({a, b}, 0).to_vector() == Vec{1, 2, 3, 4, 5, 6});
  CHECK(cat({a, c}, 1).to_vector() == Vec{1, 2, 7, 8, 9, 3, 4, 10, 11, 12});
  CHECK(cat({a, c, a}, -1).to_vector() == Vec{1, 2, 7, 8, 9, 1, 2, 3, 4, 10, 11, 12, 3, 4});
  CHECK(cat({a}, 0).to_vector() == a.to_vector());
  CHECK(cat({a, zeros({0, 2}), b}, 0).to_vector() == Vec{1, 2, 3, 4, 5, 6});

  // 3-D, middle dim: y[i] = [x0[i]; x1[i]]
  Tensor x0 = arange(0, 6).reshape({2, 1, 3}), x1 = arange(6, 18).reshape({2, 2, 3});
  CHECK(cat({x0, x1}, 1).to_vector() ==
        Vec{0, 1, 2, 6, 7, 8, 9, 10, 11, 3, 4, 5, 12, 13, 14, 15, 16, 17});
}

TEST_CASE("shape_ops: cat backward splits dy; an input used twice gets both parts") {
  Tensor a = zeros({2, 2}).requires_grad_();
  Tensor b = zeros({2, 1}).requires_grad_();
  Tensor k = ones({2, 1});  // needs no grad
  Tensor y = cat({a, k, b, a}, 1);  // (2, 6)
  y.backward(arange(12).reshape({2, 6}));
  // dy = [[0 1 | 2 | 3 | 4 5] [6 7 | 8 | 9 | 10 11]]
  CHECK(a.grad().to_vector() == Vec{0 + 4, 1 + 5, 6 + 10, 7 + 11});
  CHECK(b.grad().to_vector() == Vec{3, 9});
  CHECK_FALSE(k.grad().defined());
}

TEST_CASE("shape_ops: cat errors name cat and the shapes") {
  Tensor a = zeros({2, 3}), b = zeros({2, 4}), c = zeros({2, 3, 1});
  CHECK(starts_with(error_of([&] { cat(std::vector<Tensor>{}, 0); }), "cat:"));
  const std::string e = error_of([&] { cat({a, b}, 0); });
  CHECK(starts_with(e, "cat:"));
  CHECK(e.find("(2,3)") != std::string::npos);
  CHECK(e.find("(2,4)") != std::string::npos);
  CHECK(cat({a, b}, 1).shape() == Shape{2, 7});  // fine along the dim that differs
  CHECK(starts_with(error_of([&] { cat({a, c}, 1); }), "cat:"));
  CHECK(starts_with(error_of([&] { cat({a, a}, 2); }), "cat:"));
  CHECK(starts_with(error_of([&] { cat({scalar_tensor(1), scalar_tensor(2)}, 0); }), "cat:"));
}

TEST_CASE("shape_ops: stack values, backward and errors") {
  Tensor a = from_vector({1, 2, 3}, {3}), b = from_vector({4, 5, 6}, {3});
  CHECK(stack({a, b}, 0).shape() == Shape{2, 3});
  CHECK(stack({a, b}, 0).to_vector() == Vec{1, 2, 3, 4, 5, 6});
  CHECK(stack({a, b}, 1).shape() == Shape{3, 2});
  CHECK(stack({a, b}, -1).to_vector() == Vec{1, 4, 2, 5, 3, 6});
  CHECK(stack({scalar_tensor(7), scalar_tensor(8)}).to_vector() == Vec{7, 8});
  Tensor m = arange(6).reshape({2, 3});
  Tensor s = stack({m, m, m}, 1);  // (2, 3, 3): s[i][k][j] = m[i][j]
  CHECK(s.shape() == Shape{2, 3, 3});
  CHECK(s.at({1, 2, 0}) == 3);

  Tensor x = zeros({3}).requires_grad_(), y = zeros({3}).requires_grad_();
  stack({x, y}, 1).backward(from_vector({1, 2, 3, 4, 5, 6}, {3, 2}));
  CHECK(x.grad().to_vector() == Vec{1, 3, 5});
  CHECK(y.grad().to_vector() == Vec{2, 4, 6});

  CHECK(starts_with(error_of([&] { stack(std::vector<Tensor>{}, 0); }), "stack:"));
  const std::string e = error_of([&] { stack({a, zeros({4})}, 0); });
  CHECK(starts_with(e, "stack:"));
  CHECK(e.find("(4)") != std::string::npos);
  CHECK(starts_with(error_of([&] { stack({a, b}, 2); }), "stack:"));
}

TEST_CASE("shape_ops: slice, cat and transpose compose (reversing the halves of a sequence)") {
  Tensor x = arange(8).reshape({1, 8});
  Tensor y = cat({slice(x, 1, 4, 8), narrow(x, 1, 0, 4)}, 1).transpose(0, 1);
  CHECK(y.shape() == Shape{8, 1});
  CHECK(y.to_vector() == Vec{4, 5, 6, 7, 0, 1, 2, 3});
}
