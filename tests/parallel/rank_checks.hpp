// Checks made on worker threads, where Catch2 must not be used (it is not thread-safe): each
// failure is kept as a message naming the rank and the line, and the main thread reports them
// once the team's run has returned.
#pragma once

#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <vector>

namespace nubo_test {

class RankChecks {
 public:
  void expect(bool ok, int rank, const char* what, int line) {
    if (ok) return;
    std::lock_guard<std::mutex> lock(mutex_);
    failures_.push_back("rank " + std::to_string(rank) + ", line " + std::to_string(line) + ": " +
                        what);
  }
  // On the main thread, after the run.
  void report() const {
    for (const auto& f : failures_) FAIL_CHECK(f);
    CHECK(failures_.empty());
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> failures_;
};

}  // namespace nubo_test

// RANK_EXPECT(checks, worker, condition): on a worker thread, instead of CHECK.
#define RANK_EXPECT(checks, w, ...) \
  (checks).expect(static_cast<bool>(__VA_ARGS__), (w).rank(), #__VA_ARGS__, __LINE__)
