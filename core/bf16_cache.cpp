// bf16_cache.cpp - see bf16_cache.h.
#include "bf16_cache.h"

#include <mutex>
#include <unordered_map>

#include "allocator.h"
#include "matmul_precision.h"
#include "parallel.h"

namespace heed {

Bf16Copy::Bf16Copy(int64_t numel)
    : numel_(numel), data_(static_cast<real*>(alloc::allocate(std::size_t(numel) * sizeof(real)))) {}
Bf16Copy::~Bf16Copy() { alloc::deallocate(data_, std::size_t(numel_) * sizeof(real)); }

namespace {
struct Entry {
  std::weak_ptr<Storage> storage;  // expired: the parameter is gone (its address may be reused)
  uint64_t version = 0;
  int64_t numel = 0;
  std::shared_ptr<const Bf16Copy> copy;
};

struct Cache {
  std::mutex mu;
  std::unordered_map<const Storage*, Entry> entries;
};

// Never destroyed: tensors held by static objects may still ask for (or drop) copies while
// the program's statics are torn down.
Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

bool cacheable(const Tensor& w) {
  const TensorImpl* impl = w.impl();
  return impl && !impl->grad_fn && impl->leaf && impl->leaf->requires_grad;
}
}  // namespace

std::shared_ptr<const Bf16Copy> bf16_cached(const Tensor& w) {
  if (!gemm_rounds_to_bf16() || !cacheable(w) || w.numel() == 0) return nullptr;
  const std::shared_ptr<Storage>& storage = w.impl()->storage;
  const uint64_t version = w.version();
  const int64_t numel = w.numel();
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    const auto it = c.entries.find(storage.get());
    if (it != c.entries.end() && it->second.version == version && it->second.numel == numel &&
        it->second.storage.lock() == storage)
      return it->second.copy;
  }
  // A miss: round outside the lock (two threads missing at once both round; the later
  // insertion wins, and both copies are the same values).
  auto copy = std::make_shared<Bf16Copy>(numel);
  const real* src = w.data();
  real* dst = copy->data();
  parallel_for(numel, kGrainElementwise, [&](int64_t lo, int64_t hi) {
    round_to_bf16(src + lo, dst + lo, long(hi - lo));
  });
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto it = c.entries.begin(); it != c.entries.end();)  // drop the copies of dead storages
    it = it->second.storage.expired() ? c.entries.erase(it) : std::next(it);
  c.entries[storage.get()] = Entry{storage, version, numel, copy};
  return copy;
}

void clear_bf16_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.entries.clear();
}

int64_t bf16_cache_size() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return int64_t(c.entries.size());
}

// The copies serve "medium" only: emptied when the precision leaves it (the listener moved
// here from set_matmul_precision, so that matmul_precision.cpp does not include this header).
static const bool g_clears_on_precision_change = (add_matmul_precision_listener([](MatmulPrecision p) {
  if (p != MatmulPrecision::medium) clear_bf16_cache();
}), true);

}  // namespace heed
