// Runs every collective, for every type and op and a few sizes, blocking and asynchronously,
// on one worker, and compares each result with the one-thread reference. Used by the in-process
// tests and by the peer program of the cross-process tests. Called on worker threads, where
// Catch2 must not be used: problems are returned as messages for the main thread to report.
#pragma once

#include <string>
#include <vector>

#include "nubo/parallel.hpp"

namespace nubo::test {

struct CheckOptions {
  // Bit-identical results expected; otherwise floating-point results may differ by rounding
  // (several workers per process are summed before the processes are).
  bool exact = true;
  // Ranks combined host by host, `groups[h]` ranks on host h (reference.hpp's reduce_grouped);
  // empty: all in rank order.
  std::vector<int> groups;
  // Also sizes of several shared-memory chunks (a few MiB): slower, for the cross-process tests.
  bool large = false;
};

// Returns the problems found, at most 20.
std::vector<std::string> check_all_collectives(Worker& w, const CheckOptions& options = {});

}  // namespace nubo::test
