// Shared by the device tests: a simulated report without touching the real CUDA probe.
#pragma once

#include <cstdlib>
#include <string>

#include "nubo/device.hpp"
#include "scoped_env.hpp"

namespace nubo::testing {

inline DeviceReport sim_report(const std::string& spec, const char* topology = nullptr) {
  DiscoverOptions o;
  o.sim_devices = spec;
  if (topology) o.sim_topology_file = std::string(NUBO_TEST_DATA_DIR) + "/" + topology;
  o.probe_cuda = false;
  return discover(o);
}

using nubo_test::ScopedEnv;

}  // namespace nubo::testing
