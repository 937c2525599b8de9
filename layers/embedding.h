// embedding.h - nn::Embedding, a lookup table of learned vectors, as torch::nn::Embedding.
//
//   y[..., :] = W[ids[...], :]         ids: (...) integers in [0, V)   W: (V, C)   y: (..., C)
//
// W starts as N(0, 1) with the padding_idx row (if any) zeroed; that row receives no
// gradient, so a padding token stays a zero vector through training. A negative
// padding_idx counts from the end, as in PyTorch. from_pretrained() wraps given vectors.
//
// Example:
//   auto emb = nn::Embedding(nn::EmbeddingOptions(10000, 256).padding_idx(0));
//   Tensor x = emb->forward(tokens);   // tokens (B, T) -> (B, T, 256)
#pragma once
#include <optional>

#include "module.h"

namespace heed::nn {

class EmbeddingOptions {
 public:
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  HEED_ARG(int64_t, num_embeddings);
  HEED_ARG(int64_t, embedding_dim);
  HEED_ARG(std::optional<int64_t>, padding_idx);
};

class EmbeddingImpl : public Cloneable<EmbeddingImpl> {
 public:
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}

  // Wraps `weights` (V, C), sharing its storage (as PyTorch). freeze: no gradient.
  // The padding row keeps its given values; it only stops receiving gradient.
  static std::shared_ptr<EmbeddingImpl> from_pretrained(const Tensor& weights, bool freeze = true,
                                                        std::optional<int64_t> padding_idx = std::nullopt);

  // ids (...) -> (..., embedding_dim). heed::Error naming Embedding, the id and the range
  // [0, num_embeddings) if an id is out of range.
  Tensor forward(const IndexTensor& ids);
  std::string repr() const override;  // Embedding(10, 3, padding_idx=0)
  void reset_parameters();            // N(0, 1), padding row zeroed

  EmbeddingOptions options;  // padding_idx, if set, is in [0, num_embeddings)
  Tensor weight;             // (num_embeddings, embedding_dim)

 private:
  EmbeddingImpl(const EmbeddingOptions& options, const Tensor& weights, bool freeze);
};
// The holder, written out (HEED_MODULE plus libtorch's static from_pretrained on it):
//   auto emb = nn::Embedding::from_pretrained(vectors, /*freeze=*/true);
class Embedding : public ModuleHolder<EmbeddingImpl> {
 public:
  using ModuleHolder<EmbeddingImpl>::ModuleHolder;
  using Impl = EmbeddingImpl;
  static Embedding from_pretrained(const Tensor& weights, bool freeze = true,
                                   std::optional<int64_t> padding_idx = std::nullopt) {
    return Embedding(EmbeddingImpl::from_pretrained(weights, freeze, padding_idx));
  }
};

}  // namespace heed::nn
