// transformer_encoder.cpp - one encoder layer (self-attention + FFN, pre- or post-norm),
// and the stack of them. The equations are in transformer_encoder.h.
#include "transformer_encoder.h"

#include "../autograd/ops/arith.h"
#include "../core/error.h"
#include "feed_forward.h"

namespace heed::nn {

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& opts)
    : options(opts) {
  options.check("TransformerEncoderLayer");
  const int64_t E = options.d_model(), F = options.dim_feedforward();
  const double p = options.dropout();
  const LayerNormOptions ln = LayerNormOptions({E}).eps(options.layer_norm_eps());
  self_attn = register_module("self_attn", MultiheadAttention(
                                               MultiheadAttentionOptions(E, options.nhead()).dropout(p)));
  linear1 = register_module("linear1", Linear(E, F));
  dropout = register_module("dropout", Dropout(p));
  linear2 = register_module("linear2", Linear(F, E));
  norm1 = register_module("norm1", LayerNorm(ln));
  norm2 = register_module("norm2", LayerNorm(ln));
  dropout1 = register_module("dropout1", Dropout(p));
  dropout2 = register_module("dropout2", Dropout(p));
}

// dropout1(MultiHead(x, x, x)): the weights are not needed, so they are not asked for.
Tensor TransformerEncoderLayerImpl::sa_block(const Tensor& x, const AttentionMask& mask, const Tensor& attn_bias) {
  return dropout1->forward(self_attn->forward(x, x, x, mask, attn_bias, /*need_weights=*/false).output);
}

// dropout2(linear2(dropout(act(linear1(x)))))
Tensor TransformerEncoderLayerImpl::ff_block(const Tensor& x) {
  return dropout2->forward(
      feed_forward("TransformerEncoderLayer", x, *linear1, options.activation(), *dropout, *linear2));
}

// batch_first = false: (T, B, E) in and out, the batch-first computation between.
Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const AttentionMask& src_mask,
                                            const Tensor& attn_bias) {
  if (options.batch_first()) return forward_batch_first(src, src_mask, attn_bias);
  HEED_CHECK(src.defined() && src.dim() == 3, "TransformerEncoderLayer", "with batch_first = false, src must be "
             "defined and 3-D, (T, B, E)");
  return forward_batch_first(src.transpose(0, 1), src_mask, attn_bias).transpose(0, 1);
}

Tensor TransformerEncoderLayerImpl::forward_batch_first(const Tensor& src, const AttentionMask& src_mask,
                                                        const Tensor& attn_bias) {
  check_sequence("TransformerEncoderLayer", "src", src, options.d_model());
  Tensor x = src;  // (B, T, E)
  if (options.norm_first()) {
    x = x + sa_block(norm1->forward(x), src_mask, attn_bias);  // x = x + dropout1(SelfAttn(norm1(x)))
    x = x + ff_block(norm2->forward(x));            // x = x + dropout2(FFN(norm2(x)))
  } else {
    x = norm1->forward(x + sa_block(x, src_mask, attn_bias));  // x = norm1(x + dropout1(SelfAttn(x)))
    x = norm2->forward(x + ff_block(x));            // x = norm2(x + dropout2(FFN(x)))
  }
  return x;
}

std::string TransformerEncoderLayerImpl::repr() const {
  return "TransformerEncoderLayer(" + options.repr_args() + ")";
}

TransformerEncoderImpl::TransformerEncoderImpl(const TransformerEncoderOptions& opts) : options(opts) {
  HEED_CHECK(options.num_layers() >= 1, "TransformerEncoder", "num_layers must be >= 1; got ",
             options.num_layers());
  options.layer().check("TransformerEncoder");
  layers = register_module("layers", std::make_shared<LayerStack<TransformerEncoderLayer>>());
  for (int64_t i = 0; i < options.num_layers(); ++i)  // each layer drawn afresh (see header)
    layers->push_back(TransformerEncoderLayer(options.layer()));
  if (options.norm())
    norm = register_module("norm", LayerNorm(LayerNormOptions({options.layer().d_model()})
                                                                   .eps(options.layer().layer_norm_eps())));
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const AttentionMask& mask, const Tensor& attn_bias) {
  Tensor x = src;  // (B, T, E); each layer checks the shape
  for (size_t i = 0; i < layers->size(); ++i) x = (*layers)[i].forward(x, mask, attn_bias);
  return norm ? norm->forward(x) : x;
}

std::string TransformerEncoderImpl::repr() const {
  return "TransformerEncoder(num_layers=" + std::to_string(options.num_layers()) +
         ", norm=" + (options.norm() ? "True" : "False") + ")";
}

}  // namespace heed::nn
