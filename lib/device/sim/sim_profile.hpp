// How fast a simulated GPU runs, relative to what its model should do. A spec entry may derate
// its devices, so that the preflight, selection and the cost model can be exercised against a
// sick GPU without one:
//
//   NUBO_SIM_DEVICES="7xH100-SXM5-80GB,1xH100-SXM5-80GB:gemm=0.5:pcie=3x8"
//
//   gemm=F     GEMMs run at F of the model's attainable rate (a throttled GPU)
//   membw=F    device memory at F of its attainable bandwidth
//   nvlink=F   its NVLinks at F of their rate (links down)
//   pcie=GxW   its host link trained at PCIe generation G and width W (e.g. 3x8)
//
// The sim backend keeps a modelled clock of its work at these rates (sim_backend.hpp). The
// profile of a device is found by its UUID, which the modifiers are part of.
#pragma once

#include <string>
#include <string_view>

#include "nubo/device.hpp"

namespace nubo::detail {

struct SimProfile {
  double gemm = 1, membw = 1, nvlink = 1;
  int pcie_gen = 0;     // 0: the model's own generation
  int pcie_width = 16;  // lanes
  std::string text;     // the modifiers as written (":gemm=0.5"), "" when none
  bool derated() const { return !text.empty(); }
};

// Parses ":key=value..." after an entry's model; `what` names the entry in errors.
SimProfile parse_sim_profile(std::string_view modifiers, const std::string& what);

// Remembers the profile of a simulated device (at discovery) and finds it again (when its
// backend is made, or the preflight models a link). A device never registered runs at its
// model's rates.
void register_sim_profile(const std::string& uuid, const SimProfile& profile);
SimProfile sim_profile(const Device& device);

}  // namespace nubo::detail
