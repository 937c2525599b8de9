// allocator.h - the caching allocator every tensor buffer, tensor header and graph
// node comes from.
//
// Training repeats the same shapes every step, so freed blocks are kept in free lists
// bucketed by size class and handed out again: after the first step, a training step
// asks the system for no new memory (tests/test_allocator.cpp proves it).
//
// Size classes: 64-byte granules up to 1 KiB, then four classes per power of two
// (e.g. 1 KiB, 1.25, 1.5, 1.75, 2 KiB, 2.5, ...), so at most 25% is wasted.
// Blocks are 64-byte aligned (cache line, and enough for AVX-512 loads). Blocks of 1 KiB
// and less are cut from 64 KiB slabs (no per-block system allocation).
//
// Small blocks are also cached per thread (allocator.cpp, "the per-thread fast path"):
// reusing one takes no lock, which is most of the cost of an op on a tiny tensor. Any
// thread may free a block any other thread allocated.
//
// Accounting (live and peak bytes) lets tests show how much memory an algorithm
// holds, e.g. O(T^2) attention scores versus O(T) for a tiled kernel. The counts are
// exact whenever no other thread is allocating at the moment they are read.
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>

namespace heed {

struct AllocatorStats {
  int64_t live_bytes = 0;     // handed out and not yet freed (in size-class bytes)
  int64_t peak_bytes = 0;     // max live_bytes since the last reset_peak_bytes()
  int64_t cached_bytes = 0;   // freed blocks kept for reuse
  int64_t system_allocs = 0;  // blocks obtained from the system, ever
  int64_t allocs = 0;         // allocate() calls, ever
};

namespace alloc {
void* allocate(std::size_t bytes);               // never returns null; throws heed::Error
void deallocate(void* p, std::size_t bytes) noexcept;  // bytes as passed to allocate
std::size_t size_class(std::size_t bytes);       // the bucket a request lands in
AllocatorStats stats();
void reset_peak_bytes();                          // peak := live
void empty_cache();  // return every cached block above 1 KiB to the system (small ones live in slabs)

// The most memory a region of code held at once, beyond what was live when it began:
//
//   alloc::PeakScope scope;
//   Tensor y = f(x); sum(y).backward();
//   int64_t extra = scope.bytes();   // peak live bytes inside the scope - live bytes at its start
//
// It resets the allocator's peak on entry and, on exit, raises it back to at least what it
// was, so scopes nest and an enclosing measurement still sees the peak inside. The counts
// are process-wide (all threads) and in size-class bytes, as stats().
// Not copyable (a scope); nothing in it throws.
class PeakScope {
 public:
  PeakScope();
  ~PeakScope();
  PeakScope(const PeakScope&) = delete;
  PeakScope& operator=(const PeakScope&) = delete;
  int64_t bytes() const;        // peak so far in this scope minus start_live()
  int64_t start_live() const { return start_live_; }

 private:
  int64_t start_live_, outer_peak_;
};
}  // namespace alloc

// A standard allocator over the cache, for std::allocate_shared and containers, so
// tensor headers, graph nodes and their edge lists are recycled too.
template <class T>
struct CachingAllocator {
  using value_type = T;
  CachingAllocator() = default;
  template <class U>
  CachingAllocator(const CachingAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(alloc::allocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { alloc::deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const CachingAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const CachingAllocator<U>&) const { return false; }
};

}  // namespace heed
