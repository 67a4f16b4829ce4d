// Discovery through the C ABI: options, nubo_device_discover, and freeing the report.
#include <memory>

#include "guard.hpp"
#include "nubo.h"
#include "nubo/device.hpp"
#include "report.hpp"
#include "sized_struct.hpp"

namespace {

nubo_device_discover_options default_options() {
  nubo_device_discover_options o{};
  o.struct_size = sizeof o;
  o.probe_cuda = 1;  // NULL strings: read the NUBO_* variables, as the C++ API does
  return o;
}

nubo::DiscoverOptions to_cpp(const nubo_device_discover_options& o) {
  nubo::DiscoverOptions d;
  if (o.sim_devices != nullptr) d.sim_devices = o.sim_devices;
  if (o.sim_topology_file != nullptr) d.sim_topology_file = o.sim_topology_file;
  d.probe_cuda = o.probe_cuda != 0;
  if (o.cuda_plugin_path != nullptr) d.cuda_plugin_path = o.cuda_plugin_path;
  return d;
}

}  // namespace

extern "C" {

NUBO_C_API nubo_status nubo_device_discover_options_init(nubo_device_discover_options* options,
                                                         size_t struct_size) {
  return nubo::capi::guard("nubo_device_discover_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_sized(default_options(), options, struct_size, "nubo_device_discover_options");
  });
}

NUBO_C_API nubo_status nubo_device_discover(const nubo_device_discover_options* options,
                                            nubo_device_report** out) {
  return nubo::capi::guard("nubo_device_discover", [&] {
    *nubo::capi::require(out, "out") = nullptr;
    nubo_device_discover_options o = default_options();
    if (options != nullptr) {
      o = nubo::capi::read_sized(*options, o, "options", "nubo_device_discover_options_init()");
    }
    auto report = std::make_unique<nubo::capi::Report>(nubo::discover(to_cpp(o)));
    *out = nubo::capi::to_handle(report.release());
  });
}

NUBO_C_API void nubo_device_report_free(nubo_device_report* report) {
  delete nubo::capi::from_handle(report);
}

}  // extern "C"
