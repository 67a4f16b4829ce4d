// Simulated devices: "8xA100-SXM4-80GB" or "2xT4,1xV100-SXM2-16GB" (NUBO_SIM_DEVICES) become
// GPUs with the properties of their model from the GPU model table and a plausible topology:
// SXM parts of one model share NVLink within each 8-GPU baseboard (all pairs through NVSwitch,
// or the DGX-1 hybrid cube mesh for V100), PCIe cards meet at the host bridge (PHB), and devices
// on different halves of a two-socket machine (more than four GPUs) meet across sockets (SYS).
// Work sent to them runs on host threads: a test double, never a claim of GPU speed. An entry
// may derate its devices ("1xH100-SXM5-80GB:gemm=0.5", sim_profile.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "device/backend/gpu_catalog.hpp"
#include "device/sim/sim_profile.hpp"
#include "nubo/device.hpp"

namespace nubo::detail {

struct SimEntry {
  int count = 0;
  const GpuModel* model = nullptr;
  SimProfile profile;  // ":gemm=0.5:pcie=3x8" after the model (sim_profile.hpp)
};

constexpr int kMaxSimDevices = 64;

// Parses a spec; errors name the entry and, for an unknown model, list the known ones.
std::vector<SimEntry> parse_sim_spec(std::string_view spec, const GpuCatalog& catalog);

struct SimMachine {
  std::vector<Device> devices;           // in PCI bus order
  std::vector<std::vector<Link>> links;  // links[i][j]
};

SimMachine build_sim_machine(const std::vector<SimEntry>& entries);

// Peer access as nubo assumes it for a link kind: NVLink and PCIe switches, not the host
// bridge or the inter-socket link.
bool peer_access_for(LinkKind kind);

}  // namespace nubo::detail
