// loss.cpp - the functions and modules of loss.h: each unpacks its options and calls the fused
// op of autograd/ops/loss.h, where the forward and hand-written backward of every loss are.
#include "loss.h"

#include <string>

#include "repr.h"

namespace heed::nn {

const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::None: return "none";
    case Reduction::Mean: return "mean";
    case Reduction::Sum: return "sum";
  }
  return "?";
}

namespace functional {

Tensor cross_entropy(const Tensor& input, const IndexTensor& target, const CrossEntropyOptions& o) {
  return cross_entropy_loss(input, target, o.weight(), o.reduction(), o.ignore_index(),
                            o.label_smoothing());
}

Tensor nll_loss(const Tensor& input, const IndexTensor& target, const NLLOptions& o) {
  return heed::nll_loss(input, target, o.weight(), o.reduction(), o.ignore_index());
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSEOptions& o) {
  return heed::mse_loss(input, target, o.reduction());
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const SoftMarginLossOptions& o) {
  return heed::soft_margin_loss(input, target, o.reduction());
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BCEWithLogitsOptions& o) {
  return heed::binary_cross_entropy_with_logits(input, target, o.weight(), o.pos_weight(),
                                                o.reduction());
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const BCELossOptions& o) {
  return heed::binary_cross_entropy(input, target, o.weight(), o.reduction());
}

}  // namespace functional

// ---------------------------------------------------------------- modules

namespace {

// PyTorch prints a loss as "CrossEntropyLoss()"; heed adds each option that differs from its
// default, in keyword form: "CrossEntropyLoss(ignore_index=0, reduction='sum', label_smoothing=0.1)".
class ReprBuilder {
 public:
  explicit ReprBuilder(const char* name) : s_(std::string(name) + "(") {}
  ReprBuilder& add(const char* key, const std::string& value) {
    s_ += (first_ ? "" : ", ") + std::string(key) + "=" + value;
    first_ = false;
    return *this;
  }
  ReprBuilder& tensor(const char* key, const Tensor& t) {  // a weight shows its shape
    return t.defined() ? add(key, detail::py_tuple(t.shape().vec())) : *this;
  }
  ReprBuilder& ignore_index(int64_t i) {
    return i == -100 ? *this : add("ignore_index", std::to_string(i));
  }
  ReprBuilder& reduction(Reduction r) {
    return r == Reduction::Mean ? *this : add("reduction", "'" + std::string(reduction_name(r)) + "'");
  }
  std::string str() const { return s_ + ")"; }

 private:
  std::string s_;
  bool first_ = true;
};

}  // namespace

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyOptions& opts) : options(opts) {
  if (options.weight().defined()) register_buffer("weight", options.weight());
}
Tensor CrossEntropyLossImpl::forward(const Tensor& input, const IndexTensor& target) {
  return functional::cross_entropy(input, target, options);
}
std::string CrossEntropyLossImpl::repr() const {
  ReprBuilder b("CrossEntropyLoss");
  b.tensor("weight", options.weight()).ignore_index(options.ignore_index()).reduction(options.reduction());
  if (options.label_smoothing() != 0) b.add("label_smoothing", detail::py_float(options.label_smoothing()));
  return b.str();
}

NLLLossImpl::NLLLossImpl(const NLLOptions& opts) : options(opts) {
  if (options.weight().defined()) register_buffer("weight", options.weight());
}
Tensor NLLLossImpl::forward(const Tensor& input, const IndexTensor& target) {
  return functional::nll_loss(input, target, options);
}
std::string NLLLossImpl::repr() const {
  return ReprBuilder("NLLLoss")
      .tensor("weight", options.weight())
      .ignore_index(options.ignore_index())
      .reduction(options.reduction())
      .str();
}

MSELossImpl::MSELossImpl(const MSEOptions& opts) : options(opts) {}
Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::mse_loss(input, target, options);
}
std::string MSELossImpl::repr() const { return ReprBuilder("MSELoss").reduction(options.reduction()).str(); }

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsOptions& opts) : options(opts) {
  if (options.weight().defined()) register_buffer("weight", options.weight());
  if (options.pos_weight().defined()) register_buffer("pos_weight", options.pos_weight());
}
Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::binary_cross_entropy_with_logits(input, target, options);
}
std::string BCEWithLogitsLossImpl::repr() const {
  return ReprBuilder("BCEWithLogitsLoss")
      .tensor("weight", options.weight())
      .tensor("pos_weight", options.pos_weight())
      .reduction(options.reduction())
      .str();
}

BCELossImpl::BCELossImpl(const BCELossOptions& opts) : options(opts) {
  if (options.weight().defined()) register_buffer("weight", options.weight());
}
Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::binary_cross_entropy(input, target, options);
}
std::string BCELossImpl::repr() const {
  return ReprBuilder("BCELoss").tensor("weight", options.weight()).reduction(options.reduction()).str();
}

SoftMarginLossImpl::SoftMarginLossImpl(const SoftMarginLossOptions& opts) : options(opts) {}
Tensor SoftMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::soft_margin_loss(input, target, options);
}
std::string SoftMarginLossImpl::repr() const {
  return ReprBuilder("SoftMarginLoss").reduction(options.reduction()).str();
}

}  // namespace heed::nn
