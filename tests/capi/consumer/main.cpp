// The installed C++ API: discover two simulated GPUs and print how many there are.
#include <cstdio>
#include <exception>

#include <nubo/nubo.hpp>

int main() {
  try {
    nubo::DiscoverOptions options;
    options.sim_devices = "2xA100-SXM4-80GB";
    options.probe_cuda = false;
    const nubo::DeviceReport report = nubo::discover(options);
    std::printf("nubo %d.%d.%d (C++): %zu devices\n", NUBO_VERSION_MAJOR, NUBO_VERSION_MINOR,
                NUBO_VERSION_PATCH, report.devices.size());
    return report.devices.size() == 2 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer_cpp: %s\n", e.what());
    return 1;
  }
}
