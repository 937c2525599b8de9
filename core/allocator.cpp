#include "allocator.h"

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "error.h"

// Under AddressSanitizer (make sanitize) the cache tells ASan which bytes are in use: a
// cached block is poisoned while it is free, and the slack between a request's end and its
// size class always is, so a read past a tensor's end or of a freed tensor's buffer is
// reported even though the memory still belongs to the cache.
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
static void poison(void* p, std::size_t n) { ASAN_POISON_MEMORY_REGION(p, n); }
static void unpoison(void* p, std::size_t n) { ASAN_UNPOISON_MEMORY_REGION(p, n); }
#else
static void poison(void*, std::size_t) {}
static void unpoison(void*, std::size_t) {}
#endif

namespace heed::alloc {
namespace {

constexpr std::size_t kAlign = 64;

// Blocks of the small classes (<= 1 KiB: tensor headers, graph nodes, one-element
// buffers) are cut from 64 KiB slabs instead of one aligned_alloc each, which would cost
// the system allocator's own header and alignment padding per block (a graph of a million
// one-element ops took twice its live bytes in resident memory). Slabs are never returned.
constexpr std::size_t kSmallMax = 1024;
constexpr std::size_t kSlabBytes = 64 * 1024;

struct Cache {
  std::mutex mu;
  std::unordered_map<std::size_t, std::vector<void*>> free_lists;  // size class -> blocks
  char* slab = nullptr;       // the slab small blocks are being cut from
  std::size_t slab_left = 0;  // bytes left in it
  AllocatorStats st;
};

// A new small block of class `cls` from the current slab (a new slab when it is used up).
// Called with the cache locked.
void* cut_small(Cache& c, std::size_t cls) {
  if (c.slab_left < cls) {
    c.slab = static_cast<char*>(std::aligned_alloc(kAlign, kSlabBytes));
    if (!c.slab) return nullptr;
    poison(c.slab, kSlabBytes);  // ASan: not handed out yet
    c.slab_left = kSlabBytes;
    c.st.system_allocs++;
  }
  void* p = c.slab;
  c.slab += cls;
  c.slab_left -= cls;
  return p;
}

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: tensors may outlive static destructors
  return *c;
}

}  // namespace

// The largest request served: anything above cannot exist in memory, and the size-class
// loop below must never see a byte count whose next power of two overflows.
constexpr std::size_t kMaxBytes = std::size_t(1) << 62;

std::size_t size_class(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes > kMaxBytes) return bytes;  // refused by allocate(); never loops
  if (bytes <= 1024) return (bytes + kAlign - 1) / kAlign * kAlign;
  // four classes per power of two: step = 2^(floor(log2(bytes-1)) - 2)
  std::size_t top = 1;
  while (top < bytes) top <<= 1;  // bytes in (top/2, top]
  const std::size_t step = top / 8;
  return (bytes + step - 1) / step * step;
}

namespace {

// The block of class `cls` handed out: from its free list, a slab, or the system; null when
// the system has no memory left. Called with the cache locked.
void* take_block(Cache& c, std::size_t cls) {
  auto it = c.free_lists.find(cls);
  if (it != c.free_lists.end() && !it->second.empty()) {
    void* p = it->second.back();
    it->second.pop_back();
    c.st.cached_bytes -= cls;
    return p;
  }
  if (cls <= kSmallMax) return cut_small(c, cls);
  c.st.system_allocs++;
  return std::aligned_alloc(kAlign, cls);
}

}  // namespace

void* allocate(std::size_t bytes) {
  HEED_CHECK(bytes <= kMaxBytes, "allocate", "impossible request of ", bytes, " bytes (limit ",
             kMaxBytes, ")");
  const std::size_t cls = size_class(bytes);
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  void* p = take_block(c, cls);
  if (!p) fail("allocate", "out of memory requesting ", bytes, " bytes");
  c.st.allocs++;
  c.st.live_bytes += cls;
  if (c.st.live_bytes > c.st.peak_bytes) c.st.peak_bytes = c.st.live_bytes;
  poison(p, cls);  // the slack past `bytes` stays poisoned under ASan
  unpoison(p, bytes);
  return p;
}

void deallocate(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  const std::size_t cls = size_class(bytes);
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.st.live_bytes -= cls;
  c.st.cached_bytes += cls;
  poison(p, cls);  // a read of a freed buffer is reported under ASan
  c.free_lists[cls].push_back(p);  // amortised: the list's capacity is kept between steps
}

AllocatorStats stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.st;
}

void reset_peak_bytes() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.st.peak_bytes = c.st.live_bytes;
}

void empty_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto& [cls, list] : c.free_lists) {
    if (cls <= kSmallMax) continue;  // part of a slab: kept for reuse
    for (void* p : list) {
      unpoison(p, cls);
      std::free(p);
    }
    c.st.cached_bytes -= static_cast<int64_t>(cls * list.size());
    list.clear();
  }
}

PeakScope::PeakScope() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  start_live_ = c.st.live_bytes;
  outer_peak_ = c.st.peak_bytes;
  c.st.peak_bytes = c.st.live_bytes;
}

PeakScope::~PeakScope() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  if (outer_peak_ > c.st.peak_bytes) c.st.peak_bytes = outer_peak_;
}

int64_t PeakScope::bytes() const { return stats().peak_bytes - start_live_; }

}  // namespace heed::alloc
