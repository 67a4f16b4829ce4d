// Whether a process (of this host) is still the one we knew: a pid alone is not enough, since
// pids are reused, so a process is known by its pid and its start time (/proc/<pid>/stat).
#pragma once

#include <cstdint>

namespace nubo::proc {

// The start time of process `pid` in clock ticks since boot; 0 when there is no such process,
// or it has exited (a zombie waiting for its parent counts as exited).
std::uint64_t start_time(long pid);

// True while process `pid`, started at `started` (start_time's value), runs.
bool alive(long pid, std::uint64_t started);

}  // namespace nubo::proc
