// tensor_methods.cpp - the op methods of Tensor (x.sum(1), x.softmax(-1), x.select(1, t), ...).
//
// The seam between core/ and autograd/: core/tensor.h declares the methods, so that a
// libtorch user can type them, but core/ includes nothing above it; they are defined here,
// beside the ops, each as one call to the free function that holds the implementation and
// its gradient. No logic lives in this file. (The view methods reshape/transpose/... are
// in views.cpp, the autograd ones in engine.cpp.)
#include "arith.h"
#include "linalg.h"
#include "reduce.h"
#include "shape_ops.h"
#include "softmax.h"
#include "topk.h"
#include "unary.h"

namespace heed {

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
Tensor Tensor::contiguous() const {
  if (!defined()) fail_undefined();
  return *this;
}

}  // namespace heed
