// embedding.cpp - nn::Embedding: the table, its initialisation, padding_idx, from_pretrained.
#include "embedding.h"

#include "../autograd/ops/embedding.h"
#include "../core/error.h"
#include "init.h"

namespace heed::nn {

// PyTorch's rule: padding_idx in [-V, V); a negative one counts from the end.
static EmbeddingOptions checked(EmbeddingOptions o) {
  const int64_t V = o.num_embeddings();
  HEED_CHECK(V >= 0 && o.embedding_dim() >= 0, "Embedding", "num_embeddings and embedding_dim "
             "must be >= 0; got ", V, " and ", o.embedding_dim());
  if (o.padding_idx()) {
    const int64_t p = *o.padding_idx();
    HEED_CHECK(p >= -V && p < V, "Embedding", "padding_idx ", p,
               " must be within num_embeddings: [", -V, ", ", V, ")");
    if (p < 0) o.padding_idx(p + V);
  }
  return o;
}

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& opts) : options(checked(opts)) {
  weight = register_parameter("weight", empty({options.num_embeddings(), options.embedding_dim()}));
  reset_parameters();
}

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& opts, const Tensor& weights, bool freeze)
    : options(checked(opts)) {
  // detach(): the same storage as `weights`, but a leaf of its own, so registering it
  // (which sets requires_grad) leaves the caller's tensor as it was.
  weight = register_parameter("weight", weights.detach(), !freeze);
}

std::shared_ptr<EmbeddingImpl> EmbeddingImpl::from_pretrained(const Tensor& weights, bool freeze,
                                                              std::optional<int64_t> padding_idx) {
  HEED_CHECK(weights.dim() == 2, "Embedding.from_pretrained", "weights must be 2-D "
             "(num_embeddings, embedding_dim); got ", weights.shape());
  EmbeddingOptions o(weights.size(0), weights.size(1));
  o.padding_idx(padding_idx);
  return std::shared_ptr<EmbeddingImpl>(new EmbeddingImpl(o, weights, freeze));
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {  // zero the padding row (written directly: not recorded)
    const int64_t C = options.embedding_dim();
    real* row = weight.data() + *options.padding_idx() * C;
    for (int64_t j = 0; j < C; ++j) row[j] = 0;
  }
}

Tensor EmbeddingImpl::forward(const IndexTensor& ids) {
  return embedding(ids, weight, options.padding_idx(), "Embedding");
}

std::string EmbeddingImpl::repr() const {
  std::string s = "Embedding(" + std::to_string(options.num_embeddings()) + ", " +
                  std::to_string(options.embedding_dim());
  if (options.padding_idx()) s += ", padding_idx=" + std::to_string(*options.padding_idx());
  return s + ")";
}

}  // namespace heed::nn
