// nubo::device::HealthWatch: the health report read again and again on a thread of its own,
// compared with what was there when the watch started.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "common/log.hpp"
#include "device/health/health_facts.hpp"
#include "nubo/error.hpp"
#include "nubo/health.hpp"

namespace nubo::device {

struct HealthWatch::State {
  DeviceReport report;
  double interval = 1;
  HealthOptions options;
  std::vector<XidRule> xids;  // read once, from options.xid_policy_file
  std::function<void(const Finding&)> on_fatal;
  std::mutex mutex;
  std::condition_variable wake;
  bool stop = false;
  std::thread thread;
};

namespace {

std::string key_of(const Finding& f) {
  return f.code + "@" + f.pci_bus_id;
}

// Each wait for events is at most this long, so that the watch stops soon when asked.
constexpr double kLongestWait = 1.0;

}  // namespace

void HealthWatch::run(State& s) {
  std::set<std::string> known;
  // Kept for the whole watch: each reading sees only what the kernel log gained since the last.
  detail::KernelLog kernel_log(s.options.kernel_log_file);
  try {
    for (const auto& f : detail::read_health(s.report, 0, s.xids, kernel_log).findings)
      known.insert(key_of(f));
  } catch (const Error& e) {
    log::warn(std::string("health watch: cannot read the GPUs' health: ") + e.what());
    return;
  }
  for (;;) {
    const double wait = std::min(s.interval, kLongestWait);
    {
      std::unique_lock lock(s.mutex);
      if (s.stop) return;
    }
    HealthReport h;
    try {
      h = detail::read_health(s.report, wait, s.xids, kernel_log);
    } catch (const Error& e) {
      log::warn(std::string("health watch: ") + e.what());
      return;
    }
    for (const auto& f : h.findings) {
      if (f.status != HealthStatus::fail || !known.insert(key_of(f)).second) continue;
      s.on_fatal(f);
      return;  // once: the job is being stopped
    }
    // NVML's wait already took up to a second; the rest of the interval passes here.
    std::unique_lock lock(s.mutex);
    const double rest = std::max(0.0, s.interval - wait);
    if (s.wake.wait_for(lock, std::chrono::duration<double>(rest), [&] { return s.stop; })) return;
  }
}

HealthWatch::HealthWatch(const DeviceReport& report, double interval_seconds,
                         std::function<void(const Finding&)> on_fatal, HealthOptions options)
    : state_(std::make_shared<State>()) {
  if (!(interval_seconds > 0) || interval_seconds > 3600)
    throw Error(Errc::invalid_argument,
                "health watch: the interval must be between 0 and 3600 s, got " +
                    std::to_string(interval_seconds));
  if (!on_fatal) throw Error(Errc::invalid_argument, "health watch: no function to call");
  state_->xids = xid_table(options.xid_policy_file);  // a bad policy fails here, not on the thread
  state_->report = report;
  state_->interval = interval_seconds;
  state_->options = std::move(options);
  state_->on_fatal = std::move(on_fatal);
  state_->thread = std::thread([s = state_] { run(*s); });
}

HealthWatch::~HealthWatch() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stop = true;
  }
  state_->wake.notify_all();
  if (state_->thread.joinable()) state_->thread.join();
}

}  // namespace nubo::device
