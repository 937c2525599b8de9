// scorer.cpp - the input conventions every scorer module shares (see scorer.h).
#include "scorer.h"

#include <string>

#include "../../core/error.h"

namespace heed::nn::detail {

void check_keys(const char* op, const Tensor& keys, int64_t key_dim, const Tensor& query) {
  const bool batched = query.defined() && query.dim() >= 2;
  HEED_CHECK(keys.defined() && keys.dim() == 3 && keys.size(2) == key_dim &&
                 (!batched || keys.size(0) == query.size(0)),
             op, "keys ", keys.defined() ? keys.shape() : Shape{}, " must be (",
             batched ? std::to_string(query.size(0)) : "B", ", Tk, ", key_dim, ")",
             batched ? " for query " + query.shape().str() : "");
}

ScorerStep scorer_inputs(const char* op, const Tensor& query, int64_t query_dim,
                         const Tensor& projected_keys, int64_t projected_dim,
                         const Tensor& values, const AttentionMask& mask) {
  HEED_CHECK(query.defined() && (query.dim() == 2 || query.dim() == 3) &&
                 query.size(-1) == query_dim,
             op, "query ", query.defined() ? query.shape() : Shape{}, " must be (B, ", query_dim,
             ") or (B, Tq, ", query_dim, ")");
  const int64_t B = query.size(0);
  const Tensor& pk = projected_keys;
  HEED_CHECK(pk.defined() && pk.dim() == 3 && pk.size(0) == B && pk.size(2) == projected_dim, op,
             "projected keys ", pk.defined() ? pk.shape() : Shape{}, " must be (", B, ", Tk, ",
             projected_dim, ") for query ", query.shape());
  HEED_CHECK(values.defined() && values.dim() == 3 && values.size(0) == B &&
                 values.size(1) == pk.size(1),
             op, "values ", values.defined() ? values.shape() : Shape{}, " must be (", B, ", ",
             pk.size(1), ", Dv) for query ", query.shape(), " and keys of length ", pk.size(1));
  ScorerStep in;
  in.step = query.dim() == 2;
  in.query = in.step ? query.unsqueeze(1) : query;  // (B, Tq, Dq)
  in.mask = mask;
  if (in.step && mask.mask().defined() && mask.mask().dim() == 2)  // (B, Tk) -> (B, 1, Tk)
    in.mask.mask(mask.mask().unsqueeze(1));
  return in;
}

Attended ScorerStep::finish(Attended a) const {
  if (step) {  // (B, 1, Dv) -> (B, Dv), (B, 1, Tk) -> (B, Tk)
    a.context = a.context.squeeze(1);
    a.weights = a.weights.squeeze(1);
  }
  return a;
}

}  // namespace heed::nn::detail
