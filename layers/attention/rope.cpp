// rope.cpp - apply_rotary and nn::RotaryEmbedding: build (or reuse) the cos/sin table and
// call the rotary op (autograd/ops/attention/rope.cpp).
#include "rope.h"

#include <algorithm>
#include <mutex>

#include "../../core/error.h"
#include "../repr.h"

namespace heed::nn {

// RotaryEmbedding keeps a table of positions 0 .. P-1 only while P stays this small (65536
// positions: 32 MB of cos/sin at D = 128 in double); a window further out gets a table of
// just its own T rows, so an offset of 1e9 costs O(T D), not a table from position 0.
constexpr int64_t kMaxCachedPositions = int64_t(1) << 16;

static void check_input(const char* op, const Tensor& x, int64_t offset) {
  HEED_CHECK(x.dim() >= 2, op, "x must be (..., T, D) with D even; got ", x.shape());
  HEED_CHECK(x.size(-1) % 2 == 0, op, "the rotated dim D must be even; got ", x.shape());
  HEED_CHECK(offset >= 0, op, "positions offset must be >= 0; got ", offset);
  const int64_t T = x.size(-2);
  HEED_CHECK(T <= kMaxRotaryPosition + 1 && offset <= kMaxRotaryPosition + 1 - T, op,
             "positions offset ", offset, " with T = ", T, " goes past the last position ",
             kMaxRotaryPosition, " RoPE can rotate accurately");
}

Tensor apply_rotary(const Tensor& x, int64_t positions_offset, double base, bool half_split) {
  check_input("apply_rotary", x, positions_offset);
  const RotaryTable t = rotary_table(x.size(-2), x.size(-1), base, positions_offset, half_split);
  return rotary(x, t);
}

RotaryEmbeddingImpl::RotaryEmbeddingImpl(const RotaryEmbeddingOptions& opts) : options(opts) {
  HEED_CHECK(options.dim() > 0 && options.dim() % 2 == 0, "RotaryEmbedding",
             "dim must be even and > 0; got ", options.dim());
  HEED_CHECK(options.base() > 0, "RotaryEmbedding", "base must be > 0; got ", options.base());
}

Tensor RotaryEmbeddingImpl::forward(const Tensor& x, int64_t offset) {
  check_input("RotaryEmbedding", x, offset);
  HEED_CHECK(x.size(-1) == options.dim(), "RotaryEmbedding", "x ", x.shape(), " must end in dim ",
             options.dim());
  const int64_t T = x.size(-2), need = offset + T;  // no overflow: check_input bounds both
  if (need > kMaxCachedPositions || T == 0)  // just this window's rows, from position offset
    return rotary(x, rotary_table(T, options.dim(), options.base(), offset, options.half_split()));
  RotaryTable table;  // this call's handle on the cache: a thread growing it meanwhile
  {                   // replaces cache_, not the tables other calls are reading
    static std::mutex mu;  // threads may run one module's forward at once (inference)
    std::lock_guard<std::mutex> lock(mu);
    const int64_t have = cache_.cos.defined() ? cache_.cos.size(0) : 0;
    if (need > have)  // grow geometrically, so step-by-step decoding rebuilds O(log T) times
      cache_ = rotary_table(std::max(need, 2 * have), options.dim(), options.base(), 0,
                            options.half_split());
    table = cache_;
  }
  return rotary(x, table, offset);
}

std::string RotaryEmbeddingImpl::repr() const {
  std::string s = "RotaryEmbedding(dim=" + std::to_string(options.dim()) +
                  ", base=" + detail::py_float(options.base());
  return s + (options.half_split() ? ", half_split=True)" : ")");
}

}  // namespace heed::nn
