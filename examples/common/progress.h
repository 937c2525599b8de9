// progress.h - the one-line training progress display of the examples.
//
//   epoch 2/6  step 150/313  loss 0.0213  41.2k tok/s  ETA 1:05
//
// On a terminal the line is redrawn in place ('\r') a few times a second; when stdout is
// a file or a pipe (CI logs), it prints plain lines instead, at each quarter of the epoch.
// ETA is for the whole run: remaining steps times the mean time per step so far.
#pragma once
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

namespace progress {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline std::string clock_text(double s) {  // 65 -> "1:05"
  char b[32];
  int v = int(s + 0.5);
  std::snprintf(b, sizeof b, "%d:%02d", v / 60, v % 60);
  return b;
}

class Bar {
 public:
  // steps_total: every step of the run, for the ETA; steps_before: already done (resumed);
  // unit: what the outer count is called on the line ("epoch", or "interval" between evaluations).
  Bar(int64_t steps_total, int64_t steps_before, std::string unit = "epoch")
      : tty_(isatty(fileno(stdout))), total_(steps_total), before_(steps_before), unit_(std::move(unit)),
        t0_(std::chrono::steady_clock::now()) {}

  void start_epoch(int epoch, int epochs, int64_t steps) {
    epoch_ = epoch, epochs_ = epochs, steps_ = steps, tokens_ = 0, next_quarter_ = 1;
    te_ = std::chrono::steady_clock::now();
  }
  // After step `step` (1-based within the epoch) with this step's loss and token count.
  void update(int64_t step, double loss, int64_t tokens) {
    ++done_;
    tokens_ += tokens;
    loss_ = loss;
    const bool last = step == steps_;
    if (tty_) {
      if (!last && seconds_since(last_draw_) < 0.25) return;
      last_draw_ = std::chrono::steady_clock::now();
      std::printf("\r%s", line(step).c_str());
      if (last) std::printf("\n");
    } else {
      if (step * 4 < next_quarter_ * steps_ && !last) return;
      while (next_quarter_ * steps_ <= step * 4) ++next_quarter_;
      std::printf("%s\n", line(step).c_str());
    }
    std::fflush(stdout);
  }
  double tokens_per_second() const { return tokens_ / std::max(1e-9, seconds_since(te_)); }

 private:
  std::string line(int64_t step) const {
    const double elapsed = seconds_since(t0_);
    const double eta = elapsed / done_ * double(total_ - before_ - done_);
    char b[160];
    std::snprintf(b, sizeof b, "%s %d/%d  step %lld/%lld  loss %.4f  %.1fk tok/s  ETA %s   ", unit_.c_str(), epoch_, epochs_,
                  (long long)step, (long long)steps_, loss_, tokens_per_second() / 1000, clock_text(eta).c_str());
    return b;
  }

  bool tty_;
  int64_t total_, before_, done_ = 0;
  std::string unit_;
  std::chrono::steady_clock::time_point t0_, te_, last_draw_{};
  int epoch_ = 0, epochs_ = 0;
  int64_t steps_ = 0, tokens_ = 0, next_quarter_ = 1;
  double loss_ = 0;
};

}  // namespace progress
