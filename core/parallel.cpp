#include "parallel.h"

#include "error.h"

extern "C" void openblas_set_num_threads(int);

namespace heed {

void set_num_threads(int n) {
  HEED_CHECK(n >= 1, "set_num_threads", "need at least 1 thread, got ", n);
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
  openblas_set_num_threads(n);
}

int get_num_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace heed
