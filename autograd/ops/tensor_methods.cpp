// tensor_methods.cpp - the op methods of Tensor (x.sum(1), x.softmax(-1), x.select(1, t), ...).
//
// The seam between core/ and autograd/: core/tensor.h declares the methods, so that a
// libtorch user can type them, but core/ includes nothing above it; they are defined here,
// beside the ops, each as one call to the free function that holds the implementation and
// its gradient. No logic lives in this file. (The view methods reshape/transpose/... are
// in views.cpp, the autograd ones in engine.cpp.)
#include "arith.h"
#include "compare.h"
#include "linalg.h"
#include "mm.h"
#include "norm.h"
#include "reduce.h"
#include "shape.h"
#include "softmax.h"
#include "topk.h"
#include "trig.h"
#include "unary.h"

namespace heed {

Tensor Tensor::add(const Tensor& other, real alpha) const {
  return alpha == 1 ? heed::add(*this, other) : heed::add(*this, heed::mul(other, alpha));
}
Tensor Tensor::add(real other) const { return heed::add(*this, other); }
Tensor Tensor::sub(const Tensor& other, real alpha) const {
  return alpha == 1 ? heed::sub(*this, other) : heed::add(*this, heed::mul(other, -alpha));
}
Tensor Tensor::sub(real other) const { return heed::add(*this, -other); }
Tensor Tensor::mul(const Tensor& other) const { return heed::mul(*this, other); }
Tensor Tensor::mul(real other) const { return heed::mul(*this, other); }
Tensor Tensor::div(const Tensor& other) const { return heed::div(*this, other); }
Tensor Tensor::div(real other) const { return heed::div(*this, other); }
Tensor Tensor::sum() const { return heed::sum(*this); }
Tensor Tensor::sum(int64_t dim, bool keepdim) const { return heed::sum(*this, dim, keepdim); }
Tensor Tensor::mean() const { return heed::mean(*this); }
Tensor Tensor::mean(int64_t dim, bool keepdim) const { return heed::mean(*this, dim, keepdim); }
Tensor Tensor::max() const { return heed::max(*this); }
ValuesIndices Tensor::max(int64_t dim, bool keepdim) const { return heed::max(*this, dim, keepdim); }
Tensor Tensor::min() const { return heed::min(*this); }
ValuesIndices Tensor::min(int64_t dim, bool keepdim) const { return heed::min(*this, dim, keepdim); }
IndexTensor Tensor::argmax(int64_t dim, bool keepdim) const { return heed::argmax(*this, dim, keepdim); }
IndexTensor Tensor::argmin(int64_t dim, bool keepdim) const { return heed::argmin(*this, dim, keepdim); }
ValuesIndices Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return heed::topk(*this, k, dim, largest, sorted);
}
Tensor Tensor::softmax(int64_t dim) const { return heed::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return heed::log_softmax(*this, dim); }
Tensor Tensor::matmul(const Tensor& other) const { return heed::matmul(*this, other); }
Tensor Tensor::select(int64_t dim, int64_t index) const { return heed::select(*this, dim, index); }
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const { return heed::chunk(*this, chunks, dim); }
std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const { return heed::split(*this, split_size, dim); }
std::vector<Tensor> Tensor::split(const std::vector<int64_t>& split_sizes, int64_t dim) const {
  return heed::split(*this, split_sizes, dim);
}
std::vector<Tensor> Tensor::unbind(int64_t dim) const { return heed::unbind(*this, dim); }
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  return heed::narrow(*this, dim, start, length);
}
Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  return heed::flatten(*this, start_dim, end_dim);
}
Tensor Tensor::exp() const { return heed::exp(*this); }
Tensor Tensor::log() const { return heed::log(*this); }
Tensor Tensor::sqrt() const { return heed::sqrt(*this); }
Tensor Tensor::tanh() const { return heed::tanh(*this); }
Tensor Tensor::sigmoid() const { return heed::sigmoid(*this); }
Tensor Tensor::relu() const { return heed::relu(*this); }
Tensor Tensor::abs() const { return heed::abs(*this); }
Tensor Tensor::neg() const { return heed::neg(*this); }
Tensor Tensor::pow(real exponent) const { return heed::pow(*this, exponent); }
Tensor Tensor::clone() const { return heed::clone(*this); }

Tensor Tensor::sin() const { return heed::sin(*this); }
Tensor Tensor::cos() const { return heed::cos(*this); }
Tensor Tensor::norm(double p) const { return heed::norm(*this, p); }
Tensor Tensor::norm(double p, int64_t dim, bool keepdim) const { return heed::norm(*this, p, dim, keepdim); }
Tensor Tensor::norm(double p, const std::vector<int64_t>& dims, bool keepdim) const {
  return heed::norm(*this, p, dims, keepdim);
}
Tensor Tensor::all() const { return heed::all(*this); }
Tensor Tensor::all(int64_t dim, bool keepdim) const { return heed::all(*this, dim, keepdim); }
Tensor Tensor::any() const { return heed::any(*this); }
Tensor Tensor::any(int64_t dim, bool keepdim) const { return heed::any(*this, dim, keepdim); }
Tensor Tensor::mm(const Tensor& other) const { return heed::mm(*this, other); }
Tensor Tensor::bmm(const Tensor& other) const { return heed::bmm(*this, other); }
Tensor Tensor::expand(const Shape& s) const { return heed::expand(*this, s); }
Tensor Tensor::expand_as(const Tensor& other) const { return heed::expand(*this, other.shape()); }
Tensor Tensor::eq(const Tensor& other) const { return heed::eq(*this, other); }
Tensor Tensor::ne(const Tensor& other) const { return heed::ne(*this, other); }
Tensor Tensor::lt(const Tensor& other) const { return heed::lt(*this, other); }
Tensor Tensor::le(const Tensor& other) const { return heed::le(*this, other); }
Tensor Tensor::gt(const Tensor& other) const { return heed::gt(*this, other); }
Tensor Tensor::ge(const Tensor& other) const { return heed::ge(*this, other); }
Tensor Tensor::eq(real other) const { return heed::eq(*this, other); }
Tensor Tensor::ne(real other) const { return heed::ne(*this, other); }
Tensor Tensor::lt(real other) const { return heed::lt(*this, other); }
Tensor Tensor::le(real other) const { return heed::le(*this, other); }
Tensor Tensor::gt(real other) const { return heed::gt(*this, other); }
Tensor Tensor::ge(real other) const { return heed::ge(*this, other); }

}  // namespace heed
