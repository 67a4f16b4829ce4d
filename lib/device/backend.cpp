// make_backend: the one place that picks a DeviceBackend implementation for a device; and the
// interface's one non-virtual helper.
#include "device/backend/backend.hpp"

#include "device/backend/backend_checks.hpp"
#include "device/cuda/cuda_backend.hpp"
#include "device/host/host_backend.hpp"
#include "device/sim/sim_backend.hpp"
#include "nubo/error.hpp"

#include <new>

namespace nubo::detail {
namespace {
constexpr std::size_t kHostAlignment = 256;  // as device memory
}  // namespace

std::unique_ptr<DeviceBackend> make_backend(const Device& device) {
  switch (device.backend) {
    case Backend::host:
      // The host's limit is its RAM as discovery saw it (0 when unknown: no limit of ours).
      return std::make_unique<HostBackend>(device, static_cast<std::size_t>(device.memory_total));
    case Backend::sim:
      return std::make_unique<SimBackend>(device);
    case Backend::cuda:
      return CudaBackend::open(device);
  }
  throw Error(Errc::invalid_argument,
              "make_backend: device " + std::to_string(device.index) + " has an unknown backend");
}

void* DeviceBackend::allocate_host(std::size_t bytes) {
  return ::operator new (bytes ? bytes : 1, std::align_val_t{kHostAlignment});
}

void DeviceBackend::free_host(void* ptr) noexcept {
  ::operator delete (ptr, std::align_val_t{kHostAlignment});
}

void DeviceBackend::gemm(const Gemm& g, DType type, const void* a, const void* b, void* c) {
  gemm(plan_gemm(g, type, *this), type, a, b, c);
}

}  // namespace nubo::detail
