// The preflight's measurements on one backend: each runs its operation until its share of the
// time budget is spent and gives the rate. Timing uses the backend's modelled clock where it
// has one (simulated devices), the wall clock after synchronize() otherwise. Buffers are freed,
// after the device has finished with them, however a measurement ends.
#pragma once

#include <cstddef>
#include <functional>

#include "device/backend/backend.hpp"

namespace nubo::detail {

struct MeasureLimits {
  double slice_seconds = 1;  // wall time one measurement may take, after its warm-up
  int max_reps = 1000;
  const std::function<bool()>* should_stop = nullptr;  // polled between repetitions
};

// Sizes that make each operation long enough to time on this kind of device, and no larger.
struct MeasureSizes {
  std::size_t gemm_n = 0;      // square GEMM of this order
  std::size_t copy_bytes = 0;  // one copy
};
MeasureSizes measure_sizes(const DeviceBackend& backend);

// Dense GEMM rate in TFLOP/s (tf32: f32 data multiplied in TensorFloat-32).
double measure_gemm_tflops(DeviceBackend& b, DType type, const MeasureLimits& limits);
// Device-to-device copy in GB/s, counting the bytes read and written.
double measure_memory_gbs(DeviceBackend& b, const MeasureLimits& limits);
// Pinned host memory to the device, and back, in GB/s.
double measure_to_device_gbs(DeviceBackend& b, const MeasureLimits& limits);
double measure_to_host_gbs(DeviceBackend& b, const MeasureLimits& limits);
// A copy from `src`'s memory into `dst`'s, in GB/s, timed on dst.
double measure_peer_gbs(DeviceBackend& dst, DeviceBackend& src, const MeasureLimits& limits);

}  // namespace nubo::detail
