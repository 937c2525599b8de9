// test_parallel.cpp - the thread count: set/get, dynamic threads' bounds, parallel_for's
// chunks cover [0, n) exactly once at any thread count (core/parallel.h). No timing.
#include <heed/core/parallel.h>

#include <vector>

#include "helpers.h"

using namespace heed;

TEST_CASE("threads: dynamic threads stay within [1, get_num_threads()]; off means exactly that") {
  const int before = get_num_threads();
  const bool dynamic = get_dynamic_threads();
  set_num_threads(2);
  CHECK(get_num_threads() == 2);
  set_dynamic_threads(true);
  for (int i = 0; i < 3; ++i) {
    const int n = detail::threads_now();
    CHECK(n >= 1);
    CHECK(n <= 2);
  }
  set_dynamic_threads(false);
  CHECK(detail::threads_now() == 2);
#ifdef _OPENMP
  CHECK(omp_get_max_threads() == 2);  // OpenBLAS follows this
  int inside = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp master
    inside = detail::threads_now();
  }
  CHECK(inside == 1);  // nested work stays on its thread
#endif
  CHECK_THROWS_AS(set_num_threads(0), Error);
  set_num_threads(before);
  set_dynamic_threads(dynamic);
}

TEST_CASE("parallel_for: every index once, at 1 and 2 threads, above and below the grain") {
  const int before = get_num_threads();
  const bool dynamic = get_dynamic_threads();
  set_dynamic_threads(false);
  for (int threads : {1, 2})
    for (int64_t n : {int64_t(1), int64_t(1000), kGrainElementwise + 7}) {
      CAPTURE(threads);
      CAPTURE(n);
      set_num_threads(threads);
      std::vector<int> hits(n, 0);
      parallel_for(n, kGrainElementwise, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) ++hits[i];
      });
      int64_t wrong = 0;
      for (int h : hits) wrong += h != 1;
      CHECK(wrong == 0);
    }
  set_num_threads(before);
  set_dynamic_threads(dynamic);
}
