#include "health_guard.hpp"

#include <cstdio>
#include <cstdlib>

#include "launcher.hpp"
#include "nubo/nubo.hpp"

namespace nubo::run {

HealthGuard::HealthGuard(double interval_seconds, bool exclude_unhealthy)
    : interval_(interval_seconds), exclude_(exclude_unhealthy) {}

void HealthGuard::start() {
  if (interval_ <= 0) return;
  {
    std::lock_guard lock(mutex_);
    failed_.reset();
  }
  report_ = discover();
  watch_ =
      std::make_unique<device::HealthWatch>(report_, interval_, [this](const device::Finding& f) {
        {
          std::lock_guard lock(mutex_);
          failed_ = f;
        }
        std::fprintf(stderr, "nubo-run: %s; stopping the job\n", device::failure_text(f).c_str());
        stop_attempt();
      });
}

bool HealthGuard::finish() {
  watch_.reset();  // joins the watch's thread: nothing writes failed_ after this
  std::lock_guard lock(mutex_);
  return failed_.has_value();
}

bool HealthGuard::exclude_failed() {
  std::optional<device::Finding> f;
  {
    std::lock_guard lock(mutex_);
    f = failed_;
  }
  if (!exclude_ || !f || f->device < 0 || f->device >= static_cast<int>(report_.devices.size()))
    return false;
  std::string keep;
  int left = 0;
  for (const auto& d : report_.devices) {
    if (d.index == f->device) continue;
    keep += (keep.empty() ? "" : ",") + d.uuid;
    ++left;
  }
  if (left == 0) {
    std::fprintf(stderr, "nubo-run: no GPU would be left without GPU %d\n", f->device);
    return false;
  }
  // The processes inherit it, and so does the next discovery of this one.
  ::setenv("CUDA_VISIBLE_DEVICES", keep.c_str(), 1);
  std::fprintf(stderr, "nubo-run: leaving GPU %d (%s) out: CUDA_VISIBLE_DEVICES=%s\n", f->device,
               report_.devices[static_cast<std::size_t>(f->device)].uuid.c_str(), keep.c_str());
  return true;
}

}  // namespace nubo::run
