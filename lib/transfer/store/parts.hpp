// What the copies of one object in parts share (copy.hpp's uploads and downloads, and
// copy_between.hpp's copies between stores): the threads that move the parts, and the progress
// they report.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

#include "nubo/copy.hpp"

namespace nubo::store {

// Runs work(i) for i in [0, count) on `streams` threads, in increasing order of i; the calling
// thread reports progress every 20 ms (tick returns false: cancel, Error(cancelled)). The first
// failure stops the rest and is rethrown.
void run_parts(std::size_t count, int streams, const std::function<void(std::size_t)>& work,
               const std::function<bool()>& tick);

// One object's progress, as the caller's callback sees it.
struct PartProgress {
  const transfer::CopyOptions& options;
  std::uint64_t total;
  std::atomic<std::uint64_t> done{0}, written{0};
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  // false: the callback asked to stop.
  bool tick();
};

}  // namespace nubo::store
