// The GPUs' health during each attempt of a job (nubo-run --watch-health): a new fatal finding
// (a fallen GPU, a double-bit ECC error, a fatal XID) stops the attempt at once, naming the GPU;
// with --exclude-unhealthy the next attempt runs without that GPU (CUDA_VISIBLE_DEVICES).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "nubo/health.hpp"

namespace nubo::run {

class HealthGuard {
 public:
  // interval_seconds 0: no watch, and every call below does nothing.
  HealthGuard(double interval_seconds, bool exclude_unhealthy);

  // Before an attempt: the devices visible now, watched until finish().
  void start();
  // After the attempt: stops watching. True when the watch stopped it (it said which GPU failed
  // and why on stderr).
  bool finish();
  // Leaves the GPU that failed out of the next attempt. False when it cannot: not asked for, a
  // GPU nubo does not list, or no GPU would be left.
  bool exclude_failed();

 private:
  double interval_;
  bool exclude_;
  DeviceReport report_;
  std::unique_ptr<device::HealthWatch> watch_;
  std::mutex mutex_;
  std::optional<device::Finding> failed_;
};

}  // namespace nubo::run
