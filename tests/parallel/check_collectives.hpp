// Runs every collective, for every type and op and a few sizes, blocking and asynchronously,
// on one worker, and compares each result with the one-thread reference. Used by the in-process
// tests and by the peer program of the cross-process tests. Called on worker threads, where
// Catch2 must not be used: problems are returned as messages for the main thread to report.
#pragma once

#include <string>
#include <vector>

#include "nubo/parallel.hpp"

namespace nubo::test {

// exact: bit-identical results expected (one process: shared memory); otherwise floating-point
// results may differ by rounding (Gloo's order). Returns the problems found, at most 20.
std::vector<std::string> check_all_collectives(Worker& w, bool exact);

}  // namespace nubo::test
