// make_backend: the one place that picks a DeviceBackend implementation for a device.
#include "device/backend.hpp"

#include "device/cuda_backend.hpp"
#include "device/host_backend.hpp"
#include "device/sim_backend.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {

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

}  // namespace nubo::detail
