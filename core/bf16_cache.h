// bf16_cache.h - a parameter's values rounded to bfloat16 once, for every GEMM that reads
// them under "medium" (core/matmul_precision.h), as PyTorch's autocast caches the casts of
// leaf tensors that require grad (at::autocast::cached_cast).
//
// Under "medium" every GEMM reads its inputs rounded to bfloat16. A weight goes into several
// GEMMs between two changes: a training step's forward (y = x W^T) and backward (dx = dy W),
// and every token of a decoding loop. Rounding it into a scratch copy at each of them is a
// full pass over the weight each time; in a one-row decoding step that pass costs as much as
// the matrix-vector product itself. bf16_cached(w) rounds w once and keeps the copy until
// w's storage changes version (an optimizer step, an in-place op, load_state_dict: each
// bumps it, core/tensor.h) or dies, and hands the same copy to every GEMM until then. The
// result is the same bits as rounding at each call.
//
// What is cached: leaves that require grad (parameters), as autocast; any other tensor gets
// nullptr and is rounded by gemm() itself. A parameter written through data() without
// bump_version() keeps its old copy until its next version: such code must bump the version
// anyway, or a saved copy for backward would go unnoticed too.
//
// The cache holds one copy per live parameter that was multiplied under "medium" (as much
// memory again as those parameters); switching the precision away from "medium"
// (set_float32_matmul_precision, a MatmulPrecisionGuard) empties it, and a parameter's copy
// is dropped once the parameter's storage is gone. Thread-safe (one mutex, taken once per
// GEMM operand); a copy handed out stays valid as long as its shared_ptr is held, even if
// the cache replaces or drops it meanwhile.
//
//   const std::shared_ptr<const Bf16Copy> w16 = bf16_cached(weight);  // null: not cached
//   gemm({false, w16 != nullptr}, false, true, N, M, K, 1, x, K, w16 ? w16->data() : W, K, ...);
#pragma once
#include <cstdint>
#include <memory>

#include "tensor.h"

namespace heed {

// w's values (its numel() elements in order), rounded to bfloat16, in a block from heed's
// caching allocator. Not copyable (it owns the block).
class Bf16Copy {
 public:
  explicit Bf16Copy(int64_t numel);  // uninitialised
  ~Bf16Copy();
  Bf16Copy(const Bf16Copy&) = delete;
  Bf16Copy& operator=(const Bf16Copy&) = delete;
  const real* data() const { return data_; }
  real* data() { return data_; }

 private:
  int64_t numel_;
  real* data_;
};

// The rounded copy of w under "medium" (float build) when w is a leaf that requires grad;
// nullptr otherwise (then the GEMM rounds w itself). Rounds on a miss (split over heed's
// threads: call it outside parallel regions); heed::Error from the allocator leaves the
// cache as it was.
std::shared_ptr<const Bf16Copy> bf16_cached(const Tensor& w);

// Drops every cached copy (those still held stay valid); called when the precision leaves
// "medium". The number of copies held, for tests.
void clear_bf16_cache();
int64_t bf16_cache_size();

}  // namespace heed
