#include "transfer/pipeline/progress.hpp"

#include <algorithm>
#include <atomic>

#include "nubo/error.hpp"

namespace nubo::transfer {

using Clock = std::chrono::steady_clock;

namespace {
std::atomic<long> interval_ms{100};
}  // namespace

void ProgressTracker::set_interval_for_testing(std::chrono::milliseconds interval) {
  interval_ms = static_cast<long>(interval.count());
}

ProgressTracker::ProgressTracker(ProgressFn fn, std::uint64_t bytes_total,
                                 std::uint64_t files_total)
    : fn_(std::move(fn)), start_(Clock::now()), last_call_(start_) {
  p_.bytes_total = bytes_total;
  p_.files_total = files_total;
}

double ProgressTracker::elapsed() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

// The rate is over the last 5 seconds (or since the start), of bytes actually transferred:
// skipped bytes would make it lie about the time still needed.
void ProgressTracker::update_rate(Clock::time_point now) {
  auto moved = p_.bytes_done - p_.bytes_skipped;
  samples_.emplace_back(now, moved);
  while (samples_.size() > 2 && now - samples_[1].first > std::chrono::seconds(5)) {
    samples_.pop_front();
  }
  auto span = std::chrono::duration<double>(now - samples_.front().first).count();
  if (span > 0.05) {
    p_.rate = static_cast<double>(moved - samples_.front().second) / span;
  } else if (p_.elapsed_seconds > 0) {
    p_.rate = static_cast<double>(moved) / p_.elapsed_seconds;
  }
  auto left = p_.bytes_total > p_.bytes_done ? p_.bytes_total - p_.bytes_done : 0;
  p_.eta_seconds = left == 0 ? 0 : p_.rate > 0 ? static_cast<double>(left) / p_.rate : -1;
}

const Progress& ProgressTracker::snapshot() {
  auto now = Clock::now();
  p_.elapsed_seconds = std::chrono::duration<double>(now - start_).count();
  update_rate(now);
  p_.current_file = current_;
  return p_;
}

void ProgressTracker::report(bool force) {
  if (!fn_) return;
  auto now = Clock::now();
  if (!force && now - last_call_ < std::chrono::milliseconds(interval_ms.load())) return;
  last_call_ = now;
  if (!fn_(snapshot())) {
    throw Error(Errc::cancelled, "cancelled by the progress callback");
  }
}

}  // namespace nubo::transfer

namespace nubo::transfer {

void ProgressTracker::finish() {
  if (fn_) fn_(snapshot());
}

}  // namespace nubo::transfer
