#include "transfer/rate.hpp"

#include <algorithm>
#include <thread>

namespace nubo::transfer {

using Clock = std::chrono::steady_clock;

void RateLimiter::acquire(std::size_t bytes) {
  if (rate_ <= 0) return;
  Clock::time_point at;
  {
    std::lock_guard lock(mutex_);
    auto now = Clock::now();
    // A burst of at most 20 ms of the rate: idle time is not saved up for later.
    auto burst = std::chrono::duration_cast<Clock::duration>(std::chrono::milliseconds(20));
    if (next_ < now - burst) next_ = now - burst;
    at = next_;
    next_ += std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(static_cast<double>(bytes) / rate_));
  }
  std::this_thread::sleep_until(at);
}

double LinkMeter::recent_rate() {
  auto now = Clock::now();
  double dt = std::chrono::duration<double>(now - last_).count();
  if (dt >= 1.0) {
    auto b = bytes_.load();
    rate_ = static_cast<double>(b - last_bytes_) / dt;
    last_bytes_ = b;
    last_ = now;
  }
  return rate_;
}

}  // namespace nubo::transfer
