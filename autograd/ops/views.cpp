// views.cpp - reshape, view, squeeze, unsqueeze, flatten (views.h), contiguous(): a new shape
// over the same storage (at the same offset), and a backward that reshapes the gradient back.
#include "views.h"

#include "../../core/error.h"
#include "../engine/node.h"

namespace heed {

// Resolve a -1 entry and check the element count.
static Shape infer_shape(const Shape& from, const Shape& to) {
  Shape out = to;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < to.size(); ++i) {
    if (to[i] == -1) {
      HEED_CHECK(infer < 0, "reshape", "only one dim can be -1 in ", to);
      infer = i;
    } else if (__builtin_mul_overflow(known, to[i], &known)) {
      fail("reshape", "the element count of ", to, " overflows int64");
    }
  }
  if (infer >= 0) {
    HEED_CHECK(known > 0 && from.numel() % known == 0, "reshape", "cannot reshape ", from,
               " to ", to);
    out[infer] = from.numel() / known;
  }
  HEED_CHECK(out.numel() == from.numel(), "reshape", "cannot reshape ", from, " (", from.numel(),
             " elements) to ", to);
  return out;
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  const Shape s = infer_shape(x.shape(), shape);
  auto impl = std::allocate_shared<TensorImpl>(CachingAllocator<TensorImpl>());
  impl->storage = x.impl()->storage;
  impl->offset = x.impl()->offset;
  impl->shape = s;
  impl->view = x.impl()->view;  // a reshape of a view (shared or a copy) is that view still
  Tensor y(std::move(impl));
  return record("reshape", y, {x}, kDoubleBackward, [s = x.shape()](const Tensor& dy, Grads& g) {
    g[0] = reshape(dy, s);
  });
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  Shape s = x.shape();
  s.insert(wrap_dim("unsqueeze", dim, x.dim() + 1), 1);
  return named("unsqueeze", reshape(x, s), {x});
}

Tensor squeeze(const Tensor& x, int64_t dim) {
  const int d = wrap_dim("squeeze", dim, x.dim());
  if (x.dim() == 0 || x.shape()[d] != 1) return x;  // as PyTorch: nothing to squeeze
  Shape s = x.shape();
  s.erase(d);
  return named("squeeze", reshape(x, s), {x});
}

Tensor squeeze(const Tensor& x) {
  Shape s;
  for (int64_t n : x.shape())
    if (n != 1) s.push_back(n);
  if (s.size() == x.dim()) return x;
  return named("squeeze", reshape(x, s), {x});
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  if (x.dim() == 0) return reshape(x, Shape{1});
  const int s0 = wrap_dim("flatten", start_dim, x.dim()), s1 = wrap_dim("flatten", end_dim, x.dim());
  HEED_CHECK(s0 <= s1, "flatten", "start_dim ", start_dim, " comes after end_dim ", end_dim);
  Shape s;
  int64_t merged = 1;
  for (int i = 0; i < x.dim(); ++i) {
    if (i < s0 || i > s1) s.push_back(x.shape()[i]);
    else merged *= x.shape()[i];
    if (i == s1) s.push_back(merged);
  }
  return named("flatten", reshape(x, s), {x});
}

Tensor Tensor::reshape(const Shape& s) const { return heed::reshape(*this, s); }
Tensor Tensor::view(const Shape& s) const { return named("view", heed::reshape(*this, s), {*this}); }
Tensor Tensor::unsqueeze(int64_t d) const { return heed::unsqueeze(*this, d); }
Tensor Tensor::squeeze(int64_t d) const { return heed::squeeze(*this, d); }
Tensor Tensor::squeeze() const { return heed::squeeze(*this); }

// A view's copy (core/tensor.h, "Views") is contiguous already: the same values under a new
// handle without its mark, as libtorch's contiguous() of a strided view is a fresh tensor.
Tensor Tensor::contiguous() const {
  if (!defined()) fail_undefined();
  if (!impl()->view.op || impl()->view.shares) return *this;
  Tensor y = named("contiguous", heed::reshape(*this, shape()), {*this});
  detail::mark_view(y, nullptr, -1, false);
  return y;
}

}  // namespace heed
