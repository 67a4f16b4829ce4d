// CUDA_VISIBLE_DEVICES, applied the way the CUDA runtime applies it: a comma-separated list of
// indices or UUIDs (a unique prefix, with or without "GPU-"); the listed order becomes the new
// order; the list ends at the first entry that names no device.
#pragma once

#include <string>
#include <vector>

#include "nubo/device.hpp"

namespace nubo::detail {

struct VisibleDevices {
  std::vector<int> kept;  // positions into the candidates, in the order the variable lists them
  std::vector<Diagnosis> diagnoses;  // visible-devices-invalid / visible-devices-hide-all
};

// candidates: every device the driver enumerates, in the order indices refer to.
VisibleDevices apply_visible_devices(const std::string& spec,
                                     const std::vector<Device>& candidates);

}  // namespace nubo::detail
