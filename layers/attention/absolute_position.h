// absolute_position.h - position encodings added to the input embeddings: the fixed
// sinusoidal table of the Transformer, and a learned table (one vector per position).
//
// Sinusoidal (Vaswani et al. 2017, "Attention Is All You Need", section 3.5):
//
//   PE(pos, 2i)   = sin(pos / 10000^(2i/d_model))
//   PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))
//
// Column pair (2i, 2i+1) is a point on a circle turning at frequency w_i = 10000^(-2i/d_model),
// so PE(pos + k) is PE(pos) rotated by the angle k w_i in every pair: a fixed linear function
// of PE(pos), the same for every pos (the paper's reason for choosing it). The table is
// computed in double and then rounded, so a float build gets correctly rounded values even
// at large pos (float32 code computing the angles in float loses up to ~pos * 6e-8 in each).
// An odd d_model is handled as the formula reads: the last column, 2i = d_model - 1, is a sin
// (the usual tutorial code cannot fill it and raises; slicing div_term for the cos columns, as many
// implementations do, gives the same table as heed).
//
// Learned (Gehring et al. 2017, ConvS2S; BERT, GPT-2): P (max_len, d_model), a parameter
// initialised N(0, 1) like nn.Embedding (`nn.Embedding(max_len, d_model)`);
//   y[.., t, :] = x[.., t, :] + P[offset + t, :]
// Only the rows of the positions used receive gradient.
//
// Both modules take x (..., T, d_model) and add rows offset .. offset + T - 1 (offset > 0 when
// decoding one step at a time after offset earlier tokens); offset + T > max_len is an error.
// Cost: O(numel(x)) time per forward; the table is O(max_len d_model) memory (the sinusoidal
// one a buffer built once, the learned one a parameter).
//
// Example:
//   auto pe = nn::SinusoidalPositionalEncoding(
//       nn::SinusoidalPositionalEncodingOptions(512).max_len(1024).dropout(0.1));
//   Tensor h = pe->forward(emb->forward(tokens));   // (B, T, 512) -> (B, T, 512)
#pragma once
#include "../module.h"

namespace heed::nn {

// The (max_len, d_model) table above. heed::Error if max_len < 0 or d_model < 1.
Tensor sinusoidal_table(int64_t max_len, int64_t d_model);

class SinusoidalPositionalEncodingOptions {
 public:
  SinusoidalPositionalEncodingOptions(int64_t d_model) : d_model_(d_model) {}  // implicit
  HEED_ARG(int64_t, d_model);
  HEED_ARG(int64_t, max_len) = 5000;
  HEED_ARG(double, dropout) = 0;  // on the sum, as the paper (P_drop = 0.1)
};

class SinusoidalPositionalEncodingImpl : public Cloneable<SinusoidalPositionalEncodingImpl> {
 public:
  explicit SinusoidalPositionalEncodingImpl(const SinusoidalPositionalEncodingOptions& options);
  SinusoidalPositionalEncodingImpl(int64_t d_model, int64_t max_len = 5000, double dropout = 0)
      : SinusoidalPositionalEncodingImpl(
            SinusoidalPositionalEncodingOptions(d_model).max_len(max_len).dropout(dropout)) {}

  // x (..., T, d_model) -> dropout(x + PE[offset : offset + T]), same shape.
  Tensor forward(const Tensor& x, int64_t offset = 0);
  std::string repr() const override;  // SinusoidalPositionalEncoding(d_model=512, max_len=5000, dropout=0.1)

  SinusoidalPositionalEncodingOptions options;
  Tensor pe;  // (1, max_len, d_model), buffer "pe": the usual PyTorch module's state_dict loads as is
};
HEED_MODULE(SinusoidalPositionalEncoding);

class LearnedPositionalEmbeddingImpl : public Module {
 public:
  LearnedPositionalEmbeddingImpl(int64_t max_len, int64_t d_model);

  // x (..., T, d_model) -> x + weight[offset : offset + T], same shape.
  Tensor forward(const Tensor& x, int64_t offset = 0);
  std::string repr() const override;  // LearnedPositionalEmbedding(512, 64)
  void reset_parameters();            // N(0, 1), as nn.Embedding

  int64_t max_len, d_model;
  Tensor weight;  // (max_len, d_model)

  // A deep copy (module.h): a new module of the same sizes, with these values.
  std::shared_ptr<LearnedPositionalEmbeddingImpl> clone() const { return std::static_pointer_cast<LearnedPositionalEmbeddingImpl>(clone_module()); }

 protected:
  std::shared_ptr<Module> clone_module() const override {
    auto copy = std::make_shared<LearnedPositionalEmbeddingImpl>(max_len, d_model);
    copy->copy_state_from(*this);
    return copy;
  }
};
HEED_MODULE(LearnedPositionalEmbedding);

}  // namespace heed::nn
