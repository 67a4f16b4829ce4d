// The sim backend: one simulated GPU (from NUBO_SIM_DEVICES) as a separate device running on
// host threads. It is the host backend plus what makes a device separate:
//  - its own memory accounting, limited to the model's memory (an A100-SXM4-80GB holds 80 GB;
//    beyond that allocate() throws out_of_memory naming the device);
//  - every pointer an operation touches must lie inside one of its own live allocations, so a
//    buffer of another device, a freed buffer or an overrun is an invalid_argument naming the
//    device and the operand, instead of silently working as it would on host memory.
// It is a test double for multi-GPU logic; it makes no claim about GPU speed.
#pragma once

#include "device/host/host_backend.hpp"

namespace nubo::detail {

class SimBackend final : public HostBackend {
 public:
  explicit SimBackend(Device device);
  std::string describe() const override;

 protected:
  void check_range(const void* ptr, std::size_t bytes, const char* what) const override;
};

}  // namespace nubo::detail
