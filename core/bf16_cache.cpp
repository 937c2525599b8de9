// bf16_cache.cpp - see bf16_cache.h.
#include "bf16_cache.h"

#include <unordered_map>

#include "allocator.h"
#include "blas.h"
#include "matmul_precision.h"
#include "parallel.h"

namespace heed {

Bf16Copy::Bf16Copy(int64_t numel, bool bits)
    : numel_(numel), data_(static_cast<real*>(alloc::allocate(std::size_t(numel) * sizeof(real)))) {
  if (!bits) return;
  try {
    bits_ = static_cast<uint16_t*>(alloc::allocate(std::size_t(numel) * sizeof(uint16_t)));
  } catch (...) {
    alloc::deallocate(data_, std::size_t(numel_) * sizeof(real));
    throw;
  }
}
Bf16Copy::~Bf16Copy() {
  alloc::deallocate(data_, std::size_t(numel_) * sizeof(real));
  if (bits_) alloc::deallocate(bits_, std::size_t(numel_) * sizeof(uint16_t));
}

namespace {
struct Entry {
  std::weak_ptr<Storage> storage;  // expired: the parameter is gone (its address may be reused)
  uint64_t version = 0;
  int64_t offset = 0, numel = 0;  // which elements of storage (a row block of w is a view)
  std::shared_ptr<const Bf16Copy> copy;
};

// The calling thread's scope: how deep, and its copies. Entries exist only while depth > 0.
struct Scope {
  int depth = 0;
  std::unordered_map<const Storage*, Entry> entries;
};

Scope& scope() {
  thread_local Scope s;
  return s;
}

bool cacheable(const Tensor& w) {
  const TensorImpl* impl = w.impl();
  return impl && !impl->grad_fn && impl->leaf && impl->leaf->requires_grad;
}

// w rounded into a new copy.
std::shared_ptr<const Bf16Copy> round_copy(const Tensor& w) {
  auto copy = std::make_shared<Bf16Copy>(w.numel(), gemm_on_bf16_units());
  const real* src = w.data();
  real* dst = copy->data();
  [[maybe_unused]] uint16_t* bits = copy->bits();  // the float build only
  parallel_for(w.numel(), kGrainElementwise, [&](int64_t lo, int64_t hi) {
    round_to_bf16(src + lo, dst + lo, long(hi - lo));
#ifndef HEED_DOUBLE
    if (bits) to_bf16_bits(src + lo, bits + lo, long(hi - lo));
#endif
  });
  return copy;
}
}  // namespace

std::shared_ptr<const Bf16Copy> bf16_cached(const Tensor& w) {
  if (!gemm_rounds_to_bf16() || !cacheable(w) || w.numel() == 0) return nullptr;
  Scope& s = scope();
  if (s.depth == 0) return round_copy(w);  // no scope: nothing kept, nothing stale
  const std::shared_ptr<Storage>& storage = w.impl()->storage;
  const uint64_t version = w.version();
  const int64_t offset = w.impl()->offset, numel = w.numel();
  const auto it = s.entries.find(storage.get());
  if (it != s.entries.end() && it->second.version == version && it->second.offset == offset &&
      it->second.numel == numel &&
      it->second.storage.lock() == storage)
    return it->second.copy;
  std::shared_ptr<const Bf16Copy> copy = round_copy(w);
  for (auto e = s.entries.begin(); e != s.entries.end();)  // drop the copies of dead storages
    e = e->second.storage.expired() ? s.entries.erase(e) : std::next(e);
  s.entries[storage.get()] = Entry{storage, version, offset, numel, copy};
  return copy;
}

Bf16CacheScope::Bf16CacheScope() { ++scope().depth; }
Bf16CacheScope::~Bf16CacheScope() {
  Scope& s = scope();
  if (--s.depth == 0) s.entries.clear();
}

void clear_bf16_cache() { scope().entries.clear(); }

int64_t bf16_cache_size() { return int64_t(scope().entries.size()); }

// The copies serve "medium" only: emptied when the precision leaves it (the listener moved
// here from set_matmul_precision, so that matmul_precision.cpp does not include this header).
static const bool g_clears_on_precision_change = (add_matmul_precision_listener([](MatmulPrecision p) {
  if (p != MatmulPrecision::medium) clear_bf16_cache();
}), true);

}  // namespace heed
