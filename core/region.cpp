// region.cpp - resolving an index list against a shape (region.h), with Python's slice rules.
#include "region.h"

#include <algorithm>

#include "error.h"

namespace heed::detail {

using indexing::TensorIndex;
using Kind = TensorIndex::Kind;

Region resolve_region(const char* op, const Shape& s, const std::vector<TensorIndex>& indices) {
  int consuming = 0, ellipses = 0;
  for (const TensorIndex& i : indices) {
    HEED_CHECK(!i.bad_string(), op, "the only string index is \"...\" (Ellipsis)");
    consuming += i.kind() == Kind::Integer || i.kind() == Kind::Slice;
    ellipses += i.kind() == Kind::Ellipsis;
  }
  HEED_CHECK(ellipses <= 1, op, "an index list holds at most one Ellipsis, got ", ellipses);
  HEED_CHECK(consuming <= s.size(), op, "too many indices (", consuming, ") for shape ", s);
  Region r;
  r.x = s;
  int d = 0;
  auto whole = [&] {
    r.start[d] = 0;
    r.step[d] = 1;
    r.len.push_back(s[d]);
    r.out.push_back(s[d]);
    ++d;
  };
  for (const TensorIndex& i : indices) {
    switch (i.kind()) {
      case Kind::Ellipsis:
        for (int k = consuming; k < s.size(); ++k) whole();
        break;
      case Kind::None:
        HEED_CHECK(r.out.size() < kMaxDims, op, "None would give more than ", kMaxDims, " dims");
        r.out.push_back(1);
        break;
      case Kind::Integer: {
        const int64_t v = i.integer(), n = s[d];
        HEED_CHECK(v >= -n && v < n, op, "index ", v, " is out of range for dim ", d, " of size ", n,
                   " of shape ", s);
        r.start[d] = v < 0 ? v + n : v;
        r.step[d] = 1;
        r.len.push_back(1);
        ++d;
        break;
      }
      case Kind::Slice: {
        const indexing::Slice& sl = i.slice();
        const int64_t n = s[d], step = sl.step().value_or(1);
        HEED_CHECK(step > 0, op, "slice step must be positive, got ", step, " for dim ", d);
        auto bound = [n](int64_t b) { return b < 0 ? std::max<int64_t>(0, b + n) : std::min(b, n); };
        const int64_t start = bound(sl.start().value_or(0)), stop = bound(sl.stop().value_or(n));
        const int64_t len = stop > start ? (stop - start - 1) / step + 1 : 0;
        r.start[d] = start;
        r.step[d] = step;
        r.len.push_back(len);
        r.out.push_back(len);
        ++d;
        break;
      }
    }
  }
  while (d < s.size()) whole();  // dims after the list are taken whole
  return r;
}

}  // namespace heed::detail
