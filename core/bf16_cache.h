// bf16_cache.h - a parameter's values rounded to bfloat16 once, for every GEMM that reads
// them under "medium" (core/matmul_precision.h), as PyTorch's autocast caches the casts of
// leaf tensors that require grad (at::autocast::cached_cast).
//
// Under "medium" every GEMM reads its inputs rounded to bfloat16. A weight goes into several
// GEMMs between two changes: every step of a recurrent loop, every token of a decoding loop,
// every use in one backward pass. Rounding it into a scratch copy at each of them is a full
// pass over the weight each time; in a one-row decoding step that pass costs as much as the
// matrix-vector product itself. Inside a Bf16CacheScope, bf16_cached(w) rounds w once and
// hands the same copy to every GEMM until w's storage changes version (an optimizer step, an
// in-place op, load_state_dict: each bumps it, core/tensor.h) or the scope ends. The result
// is the same bits as rounding at each call.
//
// The copies live only as long as the outermost scope on the calling thread, as PyTorch's
// autocast cache lives for one autocast region (torch.autocast; at::autocast::cached_cast),
// because a write the cache cannot see must still reach the next GEMM: a parameter written
// through data() without bump_version() (a custom initialiser, a data() pointer kept across
// steps), or written while requires_grad was off. Outside every scope, bf16_cached(w) rounds w
// afresh at each call, so whatever wrote w, the next GEMM reads its current values. heed opens
// a scope for each backward pass (autograd/engine/engine.cpp: one rounding per parameter per pass);
// open one around a loop that reads unchanged weights many times, such as a decoding loop:
//
//   { heed::Bf16CacheScope keep;  for (...) next = model(tokens); }   // rounds each weight once
//
// Inside a scope, write parameters only through ops that bump the version (the optimizers,
// copy_, the initialisers, load_state_dict do); a write through data() without bump_version()
// inside a scope is seen after the scope ends. Writes between a forward and its backward are
// writes to tensors saved for backward: bump_version() makes backward refuse them, as in
// PyTorch.
//
// What is cached: leaves that require grad (parameters), as autocast; any other tensor gets
// nullptr and is rounded by gemm() itself.
//
// A scope holds one copy per live parameter multiplied under "medium" within it (as much
// memory again as those parameters); switching the precision away from "medium"
// (set_float32_matmul_precision, a MatmulPrecisionGuard) empties the calling thread's scope,
// and a parameter's copy is dropped once the parameter's storage is gone. The copies are per
// thread (no lock); a copy handed out stays valid as long as its shared_ptr is held, even
// after its scope ends.
//
//   const std::shared_ptr<const Bf16Copy> w16 = bf16_cached(weight);  // null: not cached
//   gemm({false, w16 != nullptr, nullptr, w16 ? w16->bits() : nullptr}, false, true, N, M, K, 1,
//        x, K, w16 ? w16->data() : W, K, ...);
#pragma once
#include <cstdint>
#include <memory>

#include "tensor.h"

namespace heed {

// w's values (its numel() elements in order), rounded to bfloat16, in a block from heed's
// caching allocator; with bits, also as their 16 bits (what oneDNN's bf16 matmul reads: made
// where "medium" runs on bf16 units, gemm_on_bf16_units(), so that a weight is converted
// once per scope, not once per GEMM). Not copyable (it owns the blocks).
class Bf16Copy {
 public:
  explicit Bf16Copy(int64_t numel, bool bits = false);  // uninitialised
  ~Bf16Copy();
  Bf16Copy(const Bf16Copy&) = delete;
  Bf16Copy& operator=(const Bf16Copy&) = delete;
  const real* data() const { return data_; }
  real* data() { return data_; }
  const uint16_t* bits() const { return bits_; }  // nullptr unless made with bits
  uint16_t* bits() { return bits_; }

 private:
  int64_t numel_;
  real* data_;
  uint16_t* bits_ = nullptr;
};

// The rounded copy of w under "medium" (float build) when w is a leaf that requires grad;
// nullptr otherwise (then the GEMM rounds w itself). Inside a Bf16CacheScope the scope's copy
// of w's current version (rounded on a miss), outside one a fresh copy. Rounds split over
// heed's threads: call it outside parallel regions; heed::Error from the allocator leaves the
// scope's copies as they were.
std::shared_ptr<const Bf16Copy> bf16_cached(const Tensor& w);

// While one is alive on a thread, bf16_cached on that thread keeps its copies; the outermost
// one's end drops them (those still held stay valid). Scopes nest. Not copyable or movable
// (a scope); a scope must end on the thread that opened it, innermost first.
class Bf16CacheScope {
 public:
  Bf16CacheScope();
  ~Bf16CacheScope();
  Bf16CacheScope(const Bf16CacheScope&) = delete;
  Bf16CacheScope& operator=(const Bf16CacheScope&) = delete;
};

// Drops the calling thread's cached copies (those still held stay valid); called when the
// precision leaves "medium". The number of copies the calling thread holds, for tests.
void clear_bf16_cache();
int64_t bf16_cache_size();

}  // namespace heed
