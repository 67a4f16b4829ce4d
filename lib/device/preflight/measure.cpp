#include "device/preflight/measure.hpp"

#include <chrono>
#include <cstring>
#include <vector>

#include "device/backend/backend_checks.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

using Clock = std::chrono::steady_clock;

// Device memory that is freed when the measurement ends, however it ends (free() waits for the
// work that uses it, so nothing is left running on the device).
class DeviceMemory {
 public:
  DeviceMemory(DeviceBackend& b, std::size_t bytes) : b_(b), p_(b.allocate(bytes)) {}
  ~DeviceMemory() {
    try {
      b_.free(p_);
    } catch (...) {  // a device that failed mid-measurement: its error was already reported
    }
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  void* get() const { return p_; }

 private:
  DeviceBackend& b_;
  void* p_;
};

class HostMemory {
 public:
  HostMemory(DeviceBackend& b, std::size_t bytes) : b_(b), p_(b.allocate_host(bytes)) {}
  ~HostMemory() {
    try {
      b_.synchronize();  // no copy may still read or write it
    } catch (...) {
    }
    b_.free_host(p_);
  }
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  void* get() const { return p_; }

 private:
  DeviceBackend& b_;
  void* p_;
};

void stop_if_asked(const MeasureLimits& limits) {
  if (limits.should_stop && *limits.should_stop && (*limits.should_stop)())
    throw Error(Errc::cancelled, "preflight: stopped on request");
}

// Seconds per call of `op` on `b`: two warm-up calls (cuBLAS picks its kernels, clocks rise),
// then as many as fit in the slice.
double seconds_per_op(DeviceBackend& b, const std::function<void()>& op,
                      const MeasureLimits& limits) {
  for (int i = 0; i < 2; ++i) op();
  b.synchronize();
  stop_if_asked(limits);
  const auto modelled_start = b.modelled_seconds();
  const auto start = Clock::now();
  int reps = 0;
  double wall = 0;
  do {
    op();
    b.synchronize();
    ++reps;
    wall = std::chrono::duration<double>(Clock::now() - start).count();
    stop_if_asked(limits);
  } while (wall < limits.slice_seconds && reps < limits.max_reps);
  if (modelled_start) return (*b.modelled_seconds() - *modelled_start) / reps;
  return wall / reps;
}

double rate(double amount, double seconds) {
  return seconds > 0 ? amount / seconds : 0;
}

}  // namespace

MeasureSizes measure_sizes(const DeviceBackend& backend) {
  // Simulated devices are timed by their model, so their work only has to exercise the path;
  // the host's GEMM is timed for real at a size a few cores finish in tens of milliseconds.
  if (backend.modelled_seconds()) return {128, std::size_t{1} << 20};
  if (backend.host_accessible()) return {1024, std::size_t{256} << 20};
  return {8192, std::size_t{512} << 20};  // a GPU: large enough to reach its full rate
}

double measure_gemm_tflops(DeviceBackend& b, DType type, const MeasureLimits& limits) {
  const std::size_t n = measure_sizes(b).gemm_n;
  const std::size_t elem = type == DType::tf32 ? 4 : dtype_size(type);
  DeviceMemory a(b, n * n * elem), m(b, n * n * elem), c(b, n * n * elem);
  // Small values keep every precision finite; what they are does not change the rate.
  const std::uint64_t one = type == DType::f16 ? 0x3c00 : type == DType::bf16 ? 0x3f80 : 0x3f800000;
  b.fill(a.get(), n * n, elem, one);
  b.fill(m.get(), n * n, elem, one);
  Gemm g;
  g.m = g.n = g.k = n;
  g.alpha = 1.0f / static_cast<float>(n);
  const GemmPlan plan = plan_gemm(g, type, b);
  const double s = seconds_per_op(
      b, [&] { b.gemm(plan, type, a.get(), m.get(), c.get()); }, limits);
  const auto order = static_cast<double>(n);
  return rate(2.0 * order * order * order, s) / 1e12;
}

double measure_memory_gbs(DeviceBackend& b, const MeasureLimits& limits) {
  const std::size_t bytes = measure_sizes(b).copy_bytes;
  DeviceMemory src(b, bytes), dst(b, bytes);
  b.fill(src.get(), bytes, 1, 0x5a);
  const double s = seconds_per_op(
      b, [&] { b.copy_on_device(dst.get(), src.get(), bytes); }, limits);
  return rate(2.0 * static_cast<double>(bytes), s) / 1e9;
}

double measure_to_device_gbs(DeviceBackend& b, const MeasureLimits& limits) {
  const std::size_t bytes = measure_sizes(b).copy_bytes;
  DeviceMemory dst(b, bytes);
  HostMemory src(b, bytes);
  std::memset(src.get(), 0x5a, bytes);
  const double s = seconds_per_op(
      b, [&] { b.copy_to_device(dst.get(), src.get(), bytes); }, limits);
  return rate(static_cast<double>(bytes), s) / 1e9;
}

double measure_to_host_gbs(DeviceBackend& b, const MeasureLimits& limits) {
  const std::size_t bytes = measure_sizes(b).copy_bytes;
  DeviceMemory src(b, bytes);
  HostMemory dst(b, bytes);
  b.fill(src.get(), bytes, 1, 0x5a);
  const double s = seconds_per_op(
      b, [&] { b.copy_to_host(dst.get(), src.get(), bytes); }, limits);
  return rate(static_cast<double>(bytes), s) / 1e9;
}

double measure_peer_gbs(DeviceBackend& dst, DeviceBackend& src, const MeasureLimits& limits) {
  const std::size_t bytes = measure_sizes(dst).copy_bytes;
  DeviceMemory from(src, bytes), to(dst, bytes);
  src.fill(from.get(), bytes, 1, 0x5a);
  src.synchronize();
  const double s = seconds_per_op(
      dst, [&] { dst.copy_from_peer(to.get(), src, from.get(), bytes); }, limits);
  return rate(static_cast<double>(bytes), s) / 1e9;
}

}  // namespace nubo::detail
