// SIGINT and SIGTERM as every long-running tool takes them. The first asks the work to stop at
// its next step (it sets the flag the work polls), so that it can end cleanly: journals
// written, partial uploads kept or aborted as asked. Work that cannot poll (a read that hangs, a
// peer that never answers) must not keep the program alive: if it has not ended `grace` after
// the first signal, it ends then. A second signal ends it at once. Ending at any moment is safe:
// what was verified is on disk and in the journals before it is counted.
#pragma once

#include <semaphore.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

namespace nubo_cli {

// Set by the first signal: what the work polls.
inline std::atomic<bool> stop_requested{false};

namespace detail {
inline int stop_status = 130;
inline sem_t stop_posted;

inline void on_stop_signal(int) {
  if (stop_requested.exchange(true)) std::_Exit(stop_status);
  ::sem_post(&stop_posted);  // async-signal-safe: wakes the watchdog
}
}  // namespace detail

// Installs the handlers, once per program: the program exits with `status` when the watchdog
// or a second signal ends it.
inline void handle_stop_signals(int status, std::chrono::milliseconds grace) {
  detail::stop_status = status;
  ::sem_init(&detail::stop_posted, 0, 0);
  std::thread([grace] {
    while (::sem_wait(&detail::stop_posted) != 0) {
    }
    std::this_thread::sleep_for(grace);
    std::_Exit(detail::stop_status);
  }).detach();
  struct sigaction sa {};
  sa.sa_handler = detail::on_stop_signal;
  sa.sa_flags = SA_RESTART;
  ::sigemptyset(&sa.sa_mask);
  for (int s : {SIGINT, SIGTERM}) ::sigaction(s, &sa, nullptr);
}

}  // namespace nubo_cli
