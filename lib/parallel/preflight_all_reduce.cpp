// The all-reduce the preflight times across a group of GPUs (lib/device/preflight/group_timer.hpp):
// the team's own collectives (NCCL on CUDA), the same number of times on every rank, since the
// ranks must make the same calls.
#include <chrono>

#include "device/preflight/group_timer.hpp"
#include "nubo/error.hpp"
#include "nubo/parallel.hpp"

namespace nubo::detail {
namespace {

double time_all_reduce(const std::vector<Device>& devices, std::size_t bytes, int reps,
                       const std::function<bool()>* should_stop) {
  const std::size_t count = bytes / dtype_size(DType::f32);
  double seconds = 0;
  Team team(devices);
  team.run([&](Worker& w) {
    auto buf = w.alloc(DType::f32, count);
    w.fill(buf, 0.0);  // sums of zeros stay finite however many rounds
    for (int i = 0; i < 2; ++i) w.all_reduce(buf);
    w.synchronize();
    w.barrier();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) w.all_reduce(buf);
    w.synchronize();
    w.barrier();
    if (w.rank() == 0)
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  if (should_stop && *should_stop && (*should_stop)())
    throw Error(Errc::cancelled, "preflight: stopped on request");
  return seconds;
}

[[maybe_unused]] const bool registered = (register_all_reduce_timer(&time_all_reduce), true);

}  // namespace
}  // namespace nubo::detail
