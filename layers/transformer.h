// transformer.h - what the Transformer layers share: their options and the layer stack.
// The layers themselves: transformer_encoder.h (read first), transformer_decoder.h; the two
// stacks joined as torch.nn.Transformer: transformer_model.h; the
// feed-forward network: feed_forward.h; the attention: multihead_attention.h.
//
// A Transformer layer (Vaswani et al. 2017, "Attention Is All You Need") is a stack of
// sub-layers, each wrapped in a residual connection and a layer norm:
//
//   Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V
//   MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,  head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)
//   FFN(x)             = max(0, x W_1 + b_1) W_2 + b_2
//
//   post-norm (the paper's, norm_first = false):   x = LayerNorm(x + Dropout(Sublayer(x)))
//   pre-norm  (norm_first = true):                 x = x + Dropout(Sublayer(LayerNorm(x)))
//
// Pre-norm (Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture")
// keeps an identity path from the output back to the input, so gradients at initialisation
// are well scaled and deep stacks train without learning-rate warm-up; its stacks usually
// end in a final LayerNorm (TransformerEncoderOptions::norm).
//
// Batch-first by default: (B, T, E), as PyTorch's layers with batch_first=True (PyTorch's
// default is False); batch_first(false) takes and returns (T, B, E) as PyTorch's default. Masks follow heed's convention (autograd/ops/attention/attention_mask.h:
// 1 = may attend), NOT PyTorch's (True = ignore): a PyTorch src_key_padding_mask `pad` is
// heed's AttentionMask().key_padding(1 - pad), and a causal tgt_mask is .causal().
//
// The options are those of torch.nn.TransformerEncoderLayer / TransformerDecoderLayer with
// the same defaults, so the two layers share one options class (libtorch has two with
// identical fields; the aliases below keep its names):
//   nn::TransformerEncoderLayerOptions(512, 8).dim_feedforward(2048).dropout(0.1)
//       .activation("relu").layer_norm_eps(1e-5).norm_first(false)
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "../core/error.h"
#include "module.h"

namespace heed::nn {

class TransformerLayerOptions {
 public:
  TransformerLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  HEED_ARG(int64_t, d_model);
  HEED_ARG(int64_t, nhead);
  HEED_ARG(int64_t, dim_feedforward) = 2048;
  HEED_ARG(double, dropout) = 0.1;               // every dropout
  HEED_ARG(std::string, activation) = "relu";    // "relu" or "gelu"
  HEED_ARG(double, layer_norm_eps) = 1e-5;
  HEED_ARG(bool, norm_first) = false;
  // true (heed's default, unlike PyTorch's): src, tgt, memory and outputs are (B, T, E).
  // false (PyTorch's default): (T, B, E); masks keep their batch-first shapes; no cache.
  HEED_ARG(bool, batch_first) = true;

  // heed::Error naming `op` unless d_model, nhead, dim_feedforward > 0, nhead divides
  // d_model, dropout is in [0, 1), eps >= 0 and the activation is known.
  void check(const char* op) const;
  // "d_model=4, nhead=2, dim_feedforward=6, dropout=0.1, activation='relu',
  //  layer_norm_eps=1e-05, norm_first=False" (the constructor's arguments, for repr())
  std::string repr_args() const;
};

using TransformerEncoderLayerOptions = TransformerLayerOptions;
using TransformerDecoderLayerOptions = TransformerLayerOptions;

// heed::Error naming `op` unless x is (B, T, E) (the batch-first computation every layer runs).
void check_sequence(const char* op, const char* name, const Tensor& x, int64_t E);

// The "layers" child of TransformerEncoder / TransformerDecoder: layer i registered as
// "i", so its parameters are "layers.0.self_attn.in_proj_weight", ... as in PyTorch's
// ModuleList (and printed by summary() as "ModuleList").
template <class Layer>
class LayerStack : public Module {
 public:
  void push_back(Layer layer) {
    register_module(std::to_string(layers_.size()), layer);
    layers_.push_back(std::move(layer));
  }
  size_t size() const { return layers_.size(); }
  typename Layer::Impl& operator[](size_t i) const {  // heed::Error if out of range
    HEED_CHECK(i < layers_.size(), "ModuleList", "index ", i, " is out of range for ",
               layers_.size(), " layers");
    return *layers_[i];
  }
  std::string repr() const override { return "ModuleList"; }

 private:
  std::vector<Layer> layers_;
};

}  // namespace heed::nn
