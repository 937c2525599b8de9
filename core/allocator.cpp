#include "allocator.h"

#include <algorithm>
#include <atomic>
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

// ---- Accounting without a lock.
//
// Each thread that allocates small blocks owns a ThreadStats slot and is the only writer of
// its counters, so the fast path below updates them with plain stores, no lock and no atomic
// read-modify-write (on the machines heed was measured on, one `lock xadd` per allocation
// cost as much as the mutex it replaced). A total is a sum over the slots: live_bytes is the
// shared counter (large blocks, the locked path, threads that have exited) plus every
// thread's own. A thread's own live bytes may go negative: it freed blocks another allocated.
//
// The sums are exact whenever the other threads are not allocating at that moment (they
// have been joined, or their parallel_for has returned): that is when tests and PeakScope
// read them. peak_bytes is raised by every allocation to the total it sees then, so it is
// exact for one allocating thread at a time; threads allocating at once each see the others'
// counts as of an instant earlier.
constexpr int kMaxThreads = 256;  // threads beyond this many use the locked path

struct alignas(64) ThreadStats {  // one cache line each: no false sharing between threads
  std::atomic<int64_t> live_bytes{0}, cached_bytes{0}, allocs{0};
  bool used = false;  // under Cache::mu: held by a live thread
};

struct Cache {
  std::mutex mu;  // guards free_lists, the slab, st and ThreadStats::used
  std::unordered_map<std::size_t, std::vector<void*>> free_lists;  // size class -> blocks
  char* slab = nullptr;       // the slab small blocks are being cut from
  std::size_t slab_left = 0;  // bytes left in it
  // system_allocs; cached_bytes of free_lists; allocs of the locked path and of exited
  // threads. Its live_bytes and peak_bytes are unused: see the two atomics below.
  AllocatorStats st;
  std::atomic<int64_t> shared_live{0};  // live bytes of the locked path and exited threads
  std::atomic<int64_t> peak_bytes{0};
  ThreadStats threads[kMaxThreads];
  std::atomic<int> nthreads{0};  // slots [0, nthreads) have been handed out
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

// The one cache, made on first use and never destroyed (tensors may outlive static
// destructors). The pointer is read on every allocation, so the fast path is one load;
// the first call (from any thread) goes through the thread-safe static below.
std::atomic<Cache*> the_cache{nullptr};

[[gnu::noinline]] Cache& make_cache() {
  static Cache* c = new Cache;
  the_cache.store(c, std::memory_order_release);
  return *c;
}

inline Cache& cache() {
  Cache* c = the_cache.load(std::memory_order_acquire);
  return c ? *c : make_cache();
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

// counter += d for a counter only one thread writes (its own ThreadStats, or one changed
// under the lock): a plain load and store, no lock prefix; readers on other threads see
// the old or the new value.
void bump(std::atomic<int64_t>& counter, int64_t d) {
  counter.store(counter.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
}

// Live bytes of the whole process: the shared count plus every thread's own.
int64_t total_live(const Cache& c) {
  int64_t live = c.shared_live.load(std::memory_order_relaxed);
  const int n = c.nthreads.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) live += c.threads[i].live_bytes.load(std::memory_order_relaxed);
  return live;
}

// peak_bytes := max(peak_bytes, live). Called after each allocation with the total it made.
void raise_peak(Cache& c, int64_t live) {
  int64_t peak = c.peak_bytes.load(std::memory_order_relaxed);
  while (live > peak && !c.peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

// ---------------------------------------------------------------- the per-thread fast path
//
// An op on a tiny tensor allocates a few small blocks (its output's header, storage and
// buffer, its graph node and edge list) and backward frees them again, so for tiny tensors
// the allocator is a large part of each op's cost, and the shared mutex was most of that.
// So each thread keeps its own stack of free blocks per small size class (<= 1 KiB, the
// slab classes), and the common case, reusing a block this thread freed, takes no lock and
// no atomic read-modify-write: it pops the stack and counts in the thread's ThreadStats.
//
// The stacks are fixed arrays of addresses, so a thread cache never allocates (a steady
// training step still calls no operator new) and never touches a free block's memory (a
// link stored inside each block would be a cache miss on every allocation). Blocks move
// between a thread and the shared lists in batches, under the lock, oldest first so the
// order of reuse is the same as one shared stack: a full stack gives its older half back,
// an empty one takes up to kRefill. So a block freed on another thread than the one that
// allocated it (parallel_for workers, OpenMP threads) is cached by the freeing thread and
// goes back into circulation, and a thread that exits gives all its blocks back.
constexpr int kSmallClasses = int(kSmallMax / kAlign);  // 64, 128, ..., 1024 bytes
constexpr int kThreadStack = 256;                        // blocks per class and thread
constexpr int kRefill = kThreadStack / 2;

thread_local bool t_cache_gone = false;  // this thread's cache was destroyed (thread exit)
// This thread's cache once it exists, cleared when it is destroyed: a plain pointer (no
// constructor), so reading it costs no thread_local guard check.
struct ThreadCache;
thread_local ThreadCache* t_cache = nullptr;

struct ThreadCache {
  void* blocks[kSmallClasses][kThreadStack];  // free blocks of class (k + 1) * kAlign
  int count[kSmallClasses] = {};              // blocks[k][count[k] - 1] is reused next
  ThreadStats* st = nullptr;                  // null: no slot left, use the locked path

  ThreadCache() {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    const int n = c.nthreads.load(std::memory_order_relaxed);
    for (int i = 0; i < n && !st; ++i)
      if (!c.threads[i].used) st = &c.threads[i];  // a slot an exited thread left
    if (!st && n < kMaxThreads) {
      st = &c.threads[n];
      c.nthreads.store(n + 1, std::memory_order_release);
    }
    if (st) st->used = true;
  }

  // Give every block back and fold this thread's counts into the shared ones.
  ~ThreadCache() {
    t_cache_gone = true;  // later frees on this thread (other thread_local destructors) lock
    t_cache = nullptr;
    if (!st) return;
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    for (int k = 0; k < kSmallClasses; ++k)
      if (count[k] > 0) give_back(c, k, count[k]);
    bump(c.shared_live, st->live_bytes.load(std::memory_order_relaxed));
    c.st.allocs += st->allocs.load(std::memory_order_relaxed);
    st->live_bytes.store(0, std::memory_order_relaxed);
    st->allocs.store(0, std::memory_order_relaxed);
    st->used = false;
  }

  // Move the n oldest blocks of stack k to the shared list. Called with the cache locked.
  void give_back(Cache& c, int k, int n) {
    const std::size_t cls = std::size_t(k + 1) * kAlign;
    std::vector<void*>& shared = c.free_lists[cls];
    shared.insert(shared.end(), blocks[k], blocks[k] + n);
    std::copy(blocks[k] + n, blocks[k] + count[k], blocks[k]);
    count[k] -= n;
    bump(st->cached_bytes, -int64_t(n * cls));
    c.st.cached_bytes += int64_t(n * cls);
  }

  // Fill the empty stack k: up to kRefill blocks from the shared list (its top stays on
  // top), else one new block cut from a slab. False when the system has no memory left.
  bool refill(Cache& c, int k) {
    const std::size_t cls = std::size_t(k + 1) * kAlign;
    std::lock_guard<std::mutex> lock(c.mu);
    std::vector<void*>& shared = c.free_lists[cls];
    int n = int(std::min<std::size_t>(kRefill, shared.size()));
    std::copy(shared.end() - n, shared.end(), blocks[k]);
    shared.resize(shared.size() - n);
    c.st.cached_bytes -= int64_t(n * cls);
    if (n == 0) {
      if (!(blocks[k][0] = cut_small(c, cls))) return false;
      n = 1;
    }
    count[k] = n;
    bump(st->cached_bytes, int64_t(n * cls));
    return true;
  }

  void* take(Cache& c, int k) {
    if (count[k] == 0 && !refill(c, k)) return nullptr;
    const int64_t cls = (k + 1) * int64_t(kAlign);
    bump(st->cached_bytes, -cls);
    bump(st->allocs, 1);
    bump(st->live_bytes, cls);
    return blocks[k][--count[k]];
  }

  void put(Cache& c, int k, void* p) {
    if (count[k] == kThreadStack) {
      std::lock_guard<std::mutex> lock(c.mu);
      give_back(c, k, kThreadStack / 2);
    }
    blocks[k][count[k]++] = p;
    const int64_t cls = (k + 1) * int64_t(kAlign);
    bump(st->cached_bytes, cls);
    bump(st->live_bytes, -cls);
  }
};

// This thread's cache, or null once the thread is exiting (or when kMaxThreads are in use).
[[gnu::noinline]] ThreadCache* make_thread_cache() {
  if (t_cache_gone) return nullptr;
  static thread_local ThreadCache tc;
  if (tc.st) t_cache = &tc;
  return t_cache;
}

inline ThreadCache* thread_cache() { return t_cache ? t_cache : make_thread_cache(); }

}  // namespace

void* allocate(std::size_t bytes) {
  HEED_CHECK(bytes <= kMaxBytes, "allocate", "impossible request of ", bytes, " bytes (limit ",
             kMaxBytes, ")");
  const std::size_t cls = size_class(bytes);
  Cache& c = cache();
  void* p = nullptr;
  ThreadCache* tc = cls <= kSmallMax ? thread_cache() : nullptr;
  if (tc) {
    p = tc->take(c, int(cls / kAlign) - 1);  // the fast path
  } else {
    std::lock_guard<std::mutex> lock(c.mu);
    p = take_block(c, cls);
    if (p) {
      c.st.allocs++;
      bump(c.shared_live, int64_t(cls));
    }
  }
  if (!p) fail("allocate", "out of memory requesting ", bytes, " bytes");
  raise_peak(c, total_live(c));
  poison(p, cls);  // the slack past `bytes` stays poisoned under ASan
  unpoison(p, bytes);
  return p;
}

void deallocate(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  const std::size_t cls = size_class(bytes);
  Cache& c = cache();
  poison(p, cls);  // a read of a freed buffer is reported under ASan
  ThreadCache* tc = cls <= kSmallMax ? thread_cache() : nullptr;
  if (tc) {
    tc->put(c, int(cls / kAlign) - 1, p);  // the fast path
    return;
  }
  std::lock_guard<std::mutex> lock(c.mu);
  bump(c.shared_live, -int64_t(cls));
  c.st.cached_bytes += cls;
  c.free_lists[cls].push_back(p);  // amortised: the list's capacity is kept between steps
}

AllocatorStats stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  AllocatorStats s = c.st;
  const int n = c.nthreads.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    s.allocs += c.threads[i].allocs.load(std::memory_order_relaxed);
    s.cached_bytes += c.threads[i].cached_bytes.load(std::memory_order_relaxed);
  }
  s.live_bytes = total_live(c);
  s.peak_bytes = c.peak_bytes.load(std::memory_order_relaxed);
  return s;
}

void reset_peak_bytes() {
  Cache& c = cache();
  c.peak_bytes.store(total_live(c), std::memory_order_relaxed);
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
  start_live_ = total_live(c);
  outer_peak_ = c.peak_bytes.exchange(start_live_, std::memory_order_relaxed);
}

PeakScope::~PeakScope() { raise_peak(cache(), outer_peak_); }

int64_t PeakScope::bytes() const { return stats().peak_bytes - start_live_; }

}  // namespace heed::alloc
