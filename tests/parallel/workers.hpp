// Devices for test teams: n host (CPU) workers, or the first n of 8 simulated A100s.
#pragma once

#include <cstddef>
#include <vector>

#include "nubo/device.hpp"

namespace nubo_test {

inline std::vector<nubo::Device> host_workers(int n) {
  nubo::DiscoverOptions o;
  o.probe_cuda = false;
  o.sim_devices = "";
  return std::vector<nubo::Device>(static_cast<std::size_t>(n), nubo::discover(o).host_device());
}

inline std::vector<nubo::Device> sim_workers(int n) {
  nubo::DiscoverOptions o;
  o.probe_cuda = false;
  o.sim_devices = "8xA100-SXM4-80GB";
  auto report = nubo::discover(o);
  return {report.devices.begin(), report.devices.begin() + n};
}

}  // namespace nubo_test
