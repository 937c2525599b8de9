// feed_forward.h - the position-wise feed-forward network of a Transformer layer
// (Vaswani et al. 2017, "Attention Is All You Need", section 3.3, equation 2).
//
//   FFN(x) = max(0, x W_1 + b_1) W_2 + b_2          (activation "relu", the paper's)
//   FFN(x) = GELU(x W_1 + b_1) W_2 + b_2            (activation "gelu", exact erf form)
//
// with dropout on the hidden layer while training, as PyTorch's Transformer layers do:
//   FFN(x) = linear2(dropout(act(linear1(x))))
// "Position-wise": the same two linear maps are applied to every position independently,
// so x may be (..., E) with any leading dims.
//
// Shapes: E = d_model, F = dim_feedforward.
//   W_1 = linear1.weight^T (E, F), b_1 (F);  W_2 = linear2.weight^T (F, E), b_2 (E)
// The names linear1 / dropout / linear2 are those of torch.nn.TransformerEncoderLayer, which
// holds these three modules directly (not in a sub-module): so do heed's Transformer layers,
// which call feed_forward() below on their own linear1 / dropout / linear2.
//
// Cost for n positions: 4 n E F flops forward (two n x E x F matmuls), about twice that
// backward; 2 E F + F + E parameters; saves the (n, F) hidden activations for backward.
//
// Example:
//   auto ff = nn::PositionwiseFeedForward(
//       nn::FeedForwardOptions(512, 2048).dropout(0.1).activation("gelu"));
//   Tensor y = ff->forward(x);   // (B, T, 512) -> (B, T, 512)
#pragma once
#include <memory>
#include <string>

#include "dropout.h"
#include "linear.h"
#include "module.h"

namespace heed::nn {

// linear2(dropout(act(linear1(x)))), act = "relu" or "gelu".  x (..., E) -> (..., E).
// The one place the FFN is computed: PositionwiseFeedForward and both Transformer layers
// call it. heed::Error naming `op` when x's last dim is not linear1's in_features.
Tensor feed_forward(const char* op, const Tensor& x, LinearImpl& linear1, const std::string& activation,
                    DropoutImpl& dropout, LinearImpl& linear2);

// heed::Error naming `op` unless activation is "relu" or "gelu" (what PyTorch's layers take
// as a string).
void check_activation(const char* op, const std::string& activation);

class FeedForwardOptions {
 public:
  FeedForwardOptions(int64_t d_model, int64_t dim_feedforward = 2048)
      : d_model_(d_model), dim_feedforward_(dim_feedforward) {}
  HEED_ARG(int64_t, d_model);
  HEED_ARG(int64_t, dim_feedforward);
  HEED_ARG(double, dropout) = 0.1;
  HEED_ARG(std::string, activation) = "relu";
};

class PositionwiseFeedForwardImpl : public Cloneable<PositionwiseFeedForwardImpl> {
 public:
  explicit PositionwiseFeedForwardImpl(const FeedForwardOptions& options);

  Tensor forward(const Tensor& x);  // (..., E) -> (..., E)
  // PositionwiseFeedForward(d_model=4, dim_feedforward=6, dropout=0.1, activation='relu')
  std::string repr() const override;

  FeedForwardOptions options;
  Linear linear1{nullptr};   // E -> F
  Dropout dropout{nullptr};  // on the hidden layer
  Linear linear2{nullptr};   // F -> E
};
HEED_MODULE(PositionwiseFeedForward);

}  // namespace heed::nn
