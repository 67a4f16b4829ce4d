// Progress of a transfer: what the callback sees, computed in one place for pack, unpack,
// verify and (next) the network. Counters are updated by the pipeline's consumer thread; the
// callback runs on that thread, at most every 100 ms and once at the end.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>

#include "nubo/transfer.hpp"

namespace nubo::transfer {

class ProgressTracker {
 public:
  ProgressTracker(ProgressFn fn, std::uint64_t bytes_total, std::uint64_t files_total);

  void add_done(std::uint64_t bytes) { p_.bytes_done += bytes; }
  void add_skipped(std::uint64_t bytes) {
    p_.bytes_skipped += bytes;
    p_.bytes_done += bytes;
  }
  void add_written(std::uint64_t bytes) { p_.bytes_written += bytes; }
  void file_done() { ++p_.files_done; }
  void set_current(const std::string& file) { current_ = file; }

  // Calls the callback when the interval has passed since the last call (or `force`); throws
  // Error(cancelled) when it returns false. Operations call report(true) once at their start, so
  // a callback can always cancel before any work.
  void report(bool force = false);
  // The last call, when the work is complete: its answer no longer matters.
  void finish();
  const Progress& snapshot();
  double elapsed() const;

  // The least time between two calls; 100 ms. Tests set 0 to cancel at exact points.
  static void set_interval_for_testing(std::chrono::milliseconds interval);

 private:
  void update_rate(std::chrono::steady_clock::time_point now);

  ProgressFn fn_;
  Progress p_;
  std::string current_;
  std::chrono::steady_clock::time_point start_, last_call_;
  // (time, bytes transferred) samples of the last few seconds, for the rate.
  std::deque<std::pair<std::chrono::steady_clock::time_point, std::uint64_t>> samples_;
};

}  // namespace nubo::transfer
