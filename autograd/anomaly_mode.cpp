// anomaly_mode.cpp - the checks behind DetectAnomalyGuard (anomaly_mode.h).
#include "anomaly_mode.h"

#include <atomic>
#include <cmath>
#include <string>

#include "../core/error.h"

namespace heed {

static std::atomic<bool> anomaly_on{false};
static std::atomic<int64_t> anomaly_count{0};

bool AnomalyMode::enabled() { return anomaly_on.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool on) { anomaly_on.store(on, std::memory_order_relaxed); }

namespace detail {

int64_t next_anomaly_index() { return ++anomaly_count; }

// The first element of t that is NaN (or, with inf_too, infinite); -1 if none.
static int64_t first_bad(const Tensor& t, bool inf_too) {
  const real* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (std::isnan(p[i]) || (inf_too && std::isinf(p[i]))) return i;
  return -1;
}

void check_forward_anomaly(const char* op, int64_t index, const Tensor& out) {
  const int64_t i = first_bad(out, false);
  if (i >= 0)
    fail("anomaly", "forward op '", op, "' (#", index, ") produced NaN at element ", i,
         " of its output, shape ", out.shape());
}

void check_backward_anomaly(const char* op, int64_t index, int input, const Tensor& grad) {
  const int64_t i = first_bad(grad, true);
  if (i >= 0)
    fail("anomaly", "backward of '", op, "' (",
         index > 0 ? "forward op #" + std::to_string(index)
                   : std::string("recorded before anomaly mode was on"), ") produced ",
         std::isnan(grad.data()[i]) ? "NaN" : "Inf", " in the gradient of input ", input,
         " at element ", i, ", shape ", grad.shape());
}

}  // namespace detail
}  // namespace heed
