// The preflight's seam to the parallel capability: timing an all-reduce across a group of GPUs
// needs a team, which lives in lib/parallel and may be left out of the build
// (NUBO_WITH_PARALLEL=OFF). lib/parallel/preflight_all_reduce.cpp registers the timer when it is
// built; without it the preflight says the group was not measured.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "nubo/device.hpp"

namespace nubo::detail {

// Seconds that `reps` all-reduces of `bytes` take on a team of `devices` (after a warm-up).
// `should_stop` (may be null) is polled once the work is done; true throws Errc::cancelled.
using AllReduceTimer = double (*)(const std::vector<Device>& devices, std::size_t bytes, int reps,
                                  const std::function<bool()>* should_stop);

void register_all_reduce_timer(AllReduceTimer timer);
AllReduceTimer all_reduce_timer();  // nullptr when the parallel capability is not built

}  // namespace nubo::detail
