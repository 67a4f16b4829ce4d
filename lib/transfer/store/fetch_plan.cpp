#include "transfer/store/fetch_plan.hpp"

#include <algorithm>
#include <cmath>

namespace nubo::store {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;
constexpr std::uint64_t kMinWindow = kMiB, kMaxWindow = 32 * kMiB;
constexpr std::uint64_t kMinAhead = 32 * kMiB, kMaxAhead = 128 * kMiB;
// A request this large measures the bandwidth: its bytes take longer than its latency.
constexpr std::uint64_t kMeasuresBandwidth = 256 << 10;

std::uint64_t power_of_two_at_least(double bytes) {
  std::uint64_t p = 1;
  while (static_cast<double>(p) < bytes && p < (std::uint64_t{1} << 62)) p <<= 1;
  return p;
}

}  // namespace

transfer::Prefetch plan_prefetch(const LinkMeasure& link, int streams) {
  const double latency = std::max(0.0, link.latency_s);
  const double rate = std::max(0.0, link.bytes_per_s);
  transfer::Prefetch p;
  p.window = std::clamp(power_of_two_at_least(8 * latency * rate), kMinWindow, kMaxWindow);
  p.ahead = std::clamp(4 * static_cast<std::uint64_t>(std::max(streams, 1)) * p.window, kMinAhead,
                       kMaxAhead);
  return p;
}

double hedge_after_s(const LinkMeasure& link, std::uint64_t bytes) {
  const double transfer =
      link.bytes_per_s > 0 ? static_cast<double>(bytes) / link.bytes_per_s : 0.0;
  return std::max(2.0, 4 * (std::max(0.0, link.latency_s) + transfer));
}

void LinkEstimate::record(std::uint64_t bytes, double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return;
  const std::lock_guard lock(mutex_);
  if (latency_s_ < 0 || seconds < latency_s_) latency_s_ = seconds;
  if (bytes < kMeasuresBandwidth) return;
  // The latency is the shortest request's time, so the flow took the rest (at least a tenth).
  const double flowing = std::max(seconds - latency_s_, seconds / 10);
  const double rate = static_cast<double>(bytes) / flowing;
  bytes_per_s_ = bytes_per_s_ > 0 ? (bytes_per_s_ + rate) / 2 : rate;
}

std::optional<LinkMeasure> LinkEstimate::measure() const {
  const std::lock_guard lock(mutex_);
  if (latency_s_ < 0) return std::nullopt;
  return LinkMeasure{latency_s_, bytes_per_s_};
}

}  // namespace nubo::store
