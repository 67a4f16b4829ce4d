// The CUDA side of discovery: loads libnubo_cuda.so with dlopen and asks it what the driver,
// NVML and the devices say. Never throws for a problem of the machine (missing plugin, driver,
// device...): those become diagnoses. libnubo itself never links CUDA.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nubo/device.hpp"

namespace nubo::detail {

struct CudaProbeResult {
  DriverInfo driver;
  std::vector<Device> devices;           // backend cuda, in CUDA ordinal order (index == ordinal)
  std::vector<std::vector<Link>> links;  // links[i][j], same order as devices
  std::vector<Diagnosis> diagnoses;
};

// plugin_path: NUBO_CUDA_PLUGIN or the option; nullopt: libnubo_cuda.so beside libnubo.
CudaProbeResult probe_cuda(const std::optional<std::string>& plugin_path);

}  // namespace nubo::detail
