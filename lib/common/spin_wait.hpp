// Waiting for another thread or process to arrive, by polling before sleeping: the peers of a
// collective usually arrive within microseconds, and waking a thread that sleeps costs 50 to
// 500 microseconds on a virtual machine (its idle vCPU has to be woken by the host), after which
// it is late for the next barrier, where the peer sleeps in turn: with short spins (50 us, or 200
// yields) two workers stayed in that state for whole runs. So a waiter polls for up to 2 ms.
//
// Each poll yields the core. A collective often waits on a worker's progress thread while the
// worker's own thread computes on the same core (gradient buckets overlap the backward pass):
// a yield lets it run, where a spin on pause instructions would hold the core until preempted.
// When nothing else wants the core, a yield returns at once and the poll costs about a
// microsecond, which also keeps the peer's cache line from being hammered (flat-out polling
// slowed the peer's copies threefold on a 2-core KVM guest). Callers do not poll at all without
// a core for each waiter.
#pragma once

#include <chrono>
#include <thread>

namespace nubo::parallel {

constexpr auto kSpinTime = std::chrono::milliseconds(2);

// Polls `ready` until it is true (returns true) or kSpinTime has passed (false). `every16` is
// called every 16 polls (to check for an abort; it may throw).
template <class Ready, class Check>
bool spin_until(Ready ready, Check every16) {
  const auto until = std::chrono::steady_clock::now() + kSpinTime;
  for (unsigned i = 0;; ++i) {
    if (ready()) return true;
    std::this_thread::yield();
    if ((i & 15) == 15) {
      every16();
      if (std::chrono::steady_clock::now() >= until) return false;
    }
  }
}

}  // namespace nubo::parallel
