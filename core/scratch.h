// scratch.h - a GEMM's temporary buffer: n values of T from heed's caching allocator
// (core/allocator.h), returned to it when the scope ends, so that a product of the same shape
// next step gets the same block back without touching the system. n = 0 holds nothing
// (data == nullptr). Not copyable (it owns its block); a throwing constructor (out of memory,
// a heed::Error) leaves nothing allocated.
//
//   Scratch<uint16_t> a16(M * K);   // a16.data: M * K values, uninitialised
#pragma once
#include <cstddef>
#include <cstdint>

#include "allocator.h"

namespace heed {

template <class T>
struct Scratch {
  explicit Scratch(int64_t n)
      : bytes(std::size_t(n) * sizeof(T)), data(n > 0 ? static_cast<T*>(alloc::allocate(bytes)) : nullptr) {}
  ~Scratch() {
    if (data) alloc::deallocate(data, bytes);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::size_t bytes;
  T* data;
};

}  // namespace heed
