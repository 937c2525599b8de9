// test_parallel.cpp - the thread count: set/get, dynamic threads' bounds, parallel_for's
// chunks cover [0, n) exactly once at any thread count (core/parallel.h). No timing.
#include <heed/autograd/ops/linalg.h>

#include <atomic>
#include <thread>
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

// topk, the additive score's backward and linear attention allocate scratch inside their
// parallel_for: when that fails, the caller gets the exception, not std::terminate.
TEST_CASE("parallel_for: an exception in one chunk reaches the caller, at 1 and 2 threads") {
  const int before = get_num_threads();
  const bool dynamic = get_dynamic_threads();
  set_dynamic_threads(false);
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    set_num_threads(threads);
    const int64_t n = 2 * kGrainElementwise;
    std::atomic<int64_t> done{0}, last{-1};
    const auto body = [&](int64_t b, int64_t e) {
      if (e == n) {
        last = b;
        fail("chunk_test", "the last chunk could not allocate");
      }
      done += e - b;
    };
    CHECK_THROWS_WITH_AS(parallel_for(n, kGrainElementwise, body),
                         doctest::Contains("chunk_test: the last chunk"), Error);
    CHECK(done == last);  // every other chunk ran (OpenMP may give fewer threads than asked)
  }
  set_num_threads(before);
  set_dynamic_threads(dynamic);
}

// What the recurrent layers rely on when a buffer cannot be allocated inside their region:
// the exception reaches run_team's caller as it was thrown, and no thread goes on past
// prepare() to a barrier the failed one would never reach (that would hang, and an exception
// leaving the region would end the program).
TEST_CASE("run_team: an exception in one thread's prepare() reaches the caller; no thread goes on") {
  for (int nt : {1, 2}) {
    for (bool throws : {false, true}) {
      CAPTURE(nt);
      CAPTURE(throws);
      std::atomic<int> started{0}, past{0}, size{0};
      const auto body = [&](const Team& team) {
        started++;
        size = team.size;
        const bool ok = team.prepare([&] {
          if (throws && team.rank == team.size - 1)
            fail("team_test", "rank ", team.rank, " could not allocate");
        });
        if (!ok) return;
        team.barrier();
        past++;
      };
      if (throws) {
        CHECK_THROWS_WITH_AS(run_team(nt, body), doctest::Contains("team_test: rank"), Error);
        CHECK(past == 0);
      } else {
        CHECK_NOTHROW(run_team(nt, body));
        CHECK(past == size);
      }
      CHECK(started == size);
      CHECK(size >= 1);
      CHECK(size <= nt);
    }
  }
}

// OpenBLAS and OpenMP regions follow each calling thread's own OpenMP setting, which a thread
// the program starts does not inherit from set_num_threads() on another. heed's first GEMM
// on that thread must bring it to heed's count, whether dynamic threads are on or off.
TEST_CASE("a std::thread's first GEMM brings its OpenMP thread count to heed's") {
#ifdef _OPENMP
  const int before = get_num_threads();
  const bool dynamic = get_dynamic_threads();
  for (bool dyn : {false, true}) {
    CAPTURE(dyn);
    set_dynamic_threads(dyn);
    set_num_threads(1);
    int seen = -1;
    std::thread worker([&] {
      omp_set_num_threads(3);  // this thread's own setting, as OMP_NUM_THREADS might give it
      const Tensor y = matmul(ones({4, 4}), ones({4, 4}));
      seen = omp_get_max_threads();
    });
    worker.join();
    CHECK(seen == 1);
  }
  set_num_threads(before);
  set_dynamic_threads(dynamic);
#endif
}
