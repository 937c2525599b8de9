// transformer_encoder.h - nn::TransformerEncoderLayer and the stack nn::TransformerEncoder,
// as torch.nn's with batch_first=True (Vaswani et al. 2017; pre-norm: Xiong et al. 2020).
// Shared options, conventions and the pre/post-norm story: transformer.h.
//
// One layer = self-attention, then the feed-forward network, each with a residual and a norm:
//
//   post-norm (norm_first = false, the paper's):
//     x = norm1(x + dropout1(SelfAttn(x)))          SelfAttn(x) = MultiHead(x, x, x)
//     x = norm2(x + dropout2(FFN(x)))               FFN(x) = linear2(dropout(act(linear1(x))))
//   pre-norm (norm_first = true):
//     x = x + dropout1(SelfAttn(norm1(x)))
//     x = x + dropout2(FFN(norm2(x)))
//
// The stack: x = layers.{N-1}( ... layers.0(src)), then x = norm(x) when a final norm is asked
// for (usual with pre-norm, whose layers leave their output un-normalised).
//
// Shapes: B batch, T sequence length, E = d_model, H = nhead, F = dim_feedforward.
//   src (B, T, E) -> (B, T, E);  src_mask: key_padding (B, T), mask (T, T) or (B, H, T, T), causal
//
// Parameters, named as torch's state_dict so its weights load one to one (in this order):
//   self_attn.in_proj_weight (3E, E)  self_attn.in_proj_bias (3E)
//   self_attn.out_proj.weight (E, E)  self_attn.out_proj.bias (E)
//   linear1.weight (F, E)  linear1.bias (F)  linear2.weight (E, F)  linear2.bias (E)
//   norm1.weight (E)  norm1.bias (E)  norm2.weight (E)  norm2.bias (E)
// The stack adds the prefix "layers.<i>." and has "norm.weight", "norm.bias" last.
// Initialisation is PyTorch's per module (xavier_uniform_ in_proj, zero in_proj and out_proj
// biases, Linear's default elsewhere, norms 1 and 0). PyTorch's TransformerEncoder deep-copies
// ONE layer N times, so its layers start identical; heed builds each layer afresh, so they
// start with independent draws. Names and shapes are the same either way.
//
// Cost of one layer, n = B*T tokens (flops = 2 x multiply-adds; backward is about 2x forward):
//   forward flops   8 n E^2 (Q, K, V, output projections) + 4 B T^2 E (Q K^T and alpha V)
//                   + 4 n E F (the FFN) + O(n E + n F + B H T^2) (norms, softmax, residuals)
//   parameters      4 E^2 + 2 E F + 9 E + F     (3,152,384 for E = 512, H = 8, F = 2048)
//   saved for backward  O(n (E + F)) activations + the (B, H, T, T) attention weights
//
// Example:
//   auto enc = nn::TransformerEncoder(nn::TransformerEncoderOptions(
//       nn::TransformerEncoderLayerOptions(512, 8).norm_first(true), 6).norm(true));
//   Tensor h = enc->forward(x, nn::AttentionMask().key_padding(real_token));  // (B, T, 512)
#pragma once
#include <memory>
#include <string>

#include "../autograd/ops/attention/attend.h"
#include "dropout.h"
#include "layer_norm.h"
#include "linear.h"
#include "module.h"
#include "attention/multihead_attention.h"
#include "transformer.h"

namespace heed::nn {

class TransformerEncoderLayerImpl : public Cloneable<TransformerEncoderLayerImpl> {
 public:
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);

  // src (B, T, E) -> (B, T, E). src_mask: heed's mask (1 = may attend) on the self-attention.
  // attn_bias: torch's FLOAT src_mask, added to the attention scores (-inf hides a key),
  // (T, T) or (B or 1, H or 1, T, T), as MultiheadAttention's attn_bias.
  Tensor forward(const Tensor& src, const AttentionMask& src_mask = {}, const Tensor& attn_bias = {});
  // TransformerEncoderLayer(d_model=4, nhead=2, ..., norm_first=False); children in summary()
  std::string repr() const override;

  TransformerEncoderLayerOptions options;
  // registered in PyTorch's order, so named_parameters() lists its state_dict keys in order
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr};                // E -> F
  Dropout dropout{nullptr};               // inside the FFN
  Linear linear2{nullptr};                // F -> E
  LayerNorm norm1{nullptr}, norm2{nullptr};        // around self-attention, around the FFN
  Dropout dropout1{nullptr}, dropout2{nullptr};    // on each sub-layer's output

 private:
  Tensor forward_batch_first(const Tensor& src, const AttentionMask& src_mask, const Tensor& attn_bias);
  Tensor sa_block(const Tensor& x, const AttentionMask& mask, const Tensor& attn_bias);  // dropout1(SelfAttn(x))
  Tensor ff_block(const Tensor& x);                             // dropout2(FFN(x))
};
HEED_MODULE(TransformerEncoderLayer);

class TransformerEncoderOptions {
 public:
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& layer, int64_t num_layers)
      : layer_(layer), num_layers_(num_layers) {}
  HEED_ARG(TransformerEncoderLayerOptions, layer);
  HEED_ARG(int64_t, num_layers);
  // A final LayerNorm(d_model, eps = layer_norm_eps), registered as "norm" (torch's `norm=`).
  HEED_ARG(bool, norm) = false;
};

class TransformerEncoderImpl : public Cloneable<TransformerEncoderImpl> {
 public:
  explicit TransformerEncoderImpl(const TransformerEncoderOptions& options);

  // src (B, T, E) -> (B, T, E); the same mask and attn_bias (torch's float src_mask: the
  // layer's forward) for every layer.
  Tensor forward(const Tensor& src, const AttentionMask& mask = {}, const Tensor& attn_bias = {});
  std::string repr() const override;  // TransformerEncoder(num_layers=6, norm=True)

  TransformerEncoderOptions options;
  std::shared_ptr<LayerStack<TransformerEncoderLayer>> layers;  // "layers.0", "layers.1", ...
  LayerNorm norm{nullptr};                              // undefined without options.norm()
};
HEED_MODULE(TransformerEncoder);

}  // namespace heed::nn
