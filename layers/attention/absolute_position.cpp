// absolute_position.cpp - the sinusoidal table and module, and the learned position table.
#include "absolute_position.h"

#include <cmath>
#include <numeric>
#include <vector>

#include "../../autograd/ops/arith.h"
#include "../../autograd/ops/dropout.h"
#include "../../autograd/ops/embedding.h"
#include "../../autograd/ops/shape.h"
#include "../../core/error.h"
#include "../init.h"
#include "../repr.h"

namespace heed::nn {

// PE(pos, 2i) = sin(pos / 10000^(2i/d)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d)), in double.
Tensor sinusoidal_table(int64_t max_len, int64_t d_model) {
  HEED_CHECK(max_len >= 0 && d_model >= 1, "sinusoidal_table", "need max_len >= 0 and d_model "
             ">= 1; got ", max_len, " and ", d_model);
  std::vector<double> denom(d_model);  // 10000^(2i/d_model) for column c = 2i and c = 2i+1
  for (int64_t c = 0; c < d_model; ++c)
    denom[c] = std::pow(10000.0, double(c - c % 2) / double(d_model));
  Tensor pe = empty({max_len, d_model});  // (max_len, d_model)
  real* p = pe.data();
  for (int64_t pos = 0; pos < max_len; ++pos)
    for (int64_t c = 0; c < d_model; ++c) {
      const double angle = double(pos) / denom[c];
      p[pos * d_model + c] = real(c % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  return pe;
}

// Checks x (..., T, d_model) and that rows offset .. offset + T - 1 exist; returns T.
static int64_t checked_length(const char* op, const Tensor& x, int64_t offset, int64_t max_len,
                              int64_t d_model) {
  HEED_CHECK(x.dim() >= 2 && x.size(-1) == d_model, op, "input ", x.shape(),
             " must be (..., T, d_model) with d_model = ", d_model);
  const int64_t T = x.size(-2);
  // offset + T <= max_len, written so that a huge offset cannot overflow
  int64_t last = 0;
  const bool past = __builtin_add_overflow(offset, T - 1, &last);
  HEED_CHECK(offset >= 0 && T <= max_len && offset <= max_len - T, op, "positions ", offset, " .. ",
             past ? std::string("past INT64_MAX") : std::to_string(last), " (offset ", offset,
             ", T = ", T, ") exceed max_len ", max_len);
  return T;
}

// ---------------------------------------------------------------- sinusoidal

SinusoidalPositionalEncodingImpl::SinusoidalPositionalEncodingImpl(
    const SinusoidalPositionalEncodingOptions& opts)
    : options(opts) {
  HEED_CHECK(options.dropout() >= 0 && options.dropout() < 1, "SinusoidalPositionalEncoding",
             "dropout must be in [0, 1); got ", options.dropout());
  const Tensor table = sinusoidal_table(options.max_len(), options.d_model());
  pe = register_buffer("pe", table.reshape({1, options.max_len(), options.d_model()}));
}

// y = dropout(x + PE[offset : offset + T]); PE is a constant, so only x gets gradient.
Tensor SinusoidalPositionalEncodingImpl::forward(const Tensor& x, int64_t offset) {
  const int64_t d = options.d_model();
  const int64_t T = checked_length("SinusoidalPositionalEncoding", x, offset, options.max_len(), d);
  const Tensor rows = reshape(narrow(pe, 1, offset, T), {T, d});  // (T, d_model)
  return dropout(x + rows, options.dropout(), is_training());
}

std::string SinusoidalPositionalEncodingImpl::repr() const {
  return "SinusoidalPositionalEncoding(d_model=" + std::to_string(options.d_model()) +
         ", max_len=" + std::to_string(options.max_len()) +
         ", dropout=" + detail::py_float(options.dropout()) + ")";
}

// ---------------------------------------------------------------- learned

LearnedPositionalEmbeddingImpl::LearnedPositionalEmbeddingImpl(int64_t max_len_, int64_t d_model_)
    : max_len(max_len_), d_model(d_model_) {
  HEED_CHECK(max_len >= 0 && d_model >= 1, "LearnedPositionalEmbedding", "need max_len >= 0 and "
             "d_model >= 1; got ", max_len, " and ", d_model);
  weight = register_parameter("weight", empty({max_len, d_model}));
  reset_parameters();
}

void LearnedPositionalEmbeddingImpl::reset_parameters() { init::normal_(weight); }

// y = x + P[positions], positions = offset .. offset + T - 1: the embedding op's backward
// scatters dy's rows (summed over the batch) into exactly those rows of dP.
Tensor LearnedPositionalEmbeddingImpl::forward(const Tensor& x, int64_t offset) {
  const int64_t T = checked_length("LearnedPositionalEmbedding", x, offset, max_len, d_model);
  std::vector<int64_t> positions(T);
  std::iota(positions.begin(), positions.end(), offset);
  return x + embedding(IndexTensor(positions), weight, std::nullopt, "LearnedPositionalEmbedding");
}

std::string LearnedPositionalEmbeddingImpl::repr() const {
  return "LearnedPositionalEmbedding(" + std::to_string(max_len) + ", " + std::to_string(d_model) + ")";
}

}  // namespace heed::nn
