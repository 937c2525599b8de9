// anomaly_mode.cpp - the checks behind DetectAnomalyGuard (anomaly_mode.h).
#include "anomaly_mode.h"

#include <atomic>
#include <cmath>
#include <string>

#include "../../core/error.h"

namespace heed {

static std::atomic<bool> anomaly_on{false};  // set_enabled
static std::atomic<int> anomaly_guards{0};   // DetectAnomalyGuards alive
static std::atomic<int64_t> anomaly_count{0};

bool AnomalyMode::enabled() {
  return anomaly_on.load(std::memory_order_relaxed) ||
         anomaly_guards.load(std::memory_order_relaxed) > 0;
}
void AnomalyMode::set_enabled(bool on) { anomaly_on.store(on, std::memory_order_relaxed); }

DetectAnomalyGuard::DetectAnomalyGuard() { anomaly_guards.fetch_add(1, std::memory_order_relaxed); }
DetectAnomalyGuard::~DetectAnomalyGuard() { anomaly_guards.fetch_sub(1, std::memory_order_relaxed); }

namespace detail {

int64_t next_anomaly_index() { return ++anomaly_count; }

// How many elements of p[0, n) are NaN (or, with inf_too, NaN or infinite). x != x holds
// only for NaN, and x - x is NaN for +-inf as well: comparisons summed into an integer,
// with no branch and no early exit, so GCC vectorises the loop (a scan that stops at the
// first NaN does not vectorise, and made anomaly mode much slower on a transformer step;
// `make bench` step 5, `bench_models --anomaly gpt_baby seq2seq`, times it off and on).
static int64_t count_bad(const real* p, int64_t n, bool inf_too) {
  int64_t bad = 0;
  if (inf_too) {
    for (int64_t i = 0; i < n; ++i) {
      const real d = p[i] - p[i];
      bad += d != d;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) bad += p[i] != p[i];
  }
  return bad;
}

// The first element of t that is NaN (or, with inf_too, infinite); -1 if none. The fast
// count first; the element-by-element search only when there is something to find.
static int64_t first_bad(const Tensor& t, bool inf_too) {
  const real* p = t.data();
  if (count_bad(p, t.numel(), inf_too) == 0) return -1;
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
