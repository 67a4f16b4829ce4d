// Reading a report through the C ABI: counts and the info structs, copied from the records the
// handle made when it was created (report.hpp).
#include "guard.hpp"
#include "nubo.h"
#include "report.hpp"

namespace {

using nubo::capi::guard;
using nubo::capi::require_device_index;
using nubo::capi::require_report;

}  // namespace

extern "C" {

NUBO_C_API size_t nubo_device_report_device_count(const nubo_device_report* report) {
  return report == nullptr ? 0 : require_report(report).devices.size();
}

NUBO_C_API size_t nubo_device_report_diagnosis_count(const nubo_device_report* report) {
  return report == nullptr ? 0 : require_report(report).diagnoses.size();
}

NUBO_C_API size_t nubo_device_report_nic_count(const nubo_device_report* report) {
  return report == nullptr ? 0 : require_report(report).nics.size();
}

NUBO_C_API nubo_status nubo_device_report_device(const nubo_device_report* report, size_t index,
                                                 nubo_device_info* out) {
  return guard("nubo_device_report_device", [&] {
    require_report(report).devices.read(index, out, "the report", "devices", "nubo_device_info");
  });
}

NUBO_C_API nubo_status nubo_device_report_host(const nubo_device_report* report,
                                               nubo_host_info* out) {
  return guard("nubo_device_report_host", [&] {
    require_report(report).host.read(0, out, "the report", "hosts", "nubo_host_info");
  });
}

NUBO_C_API nubo_status nubo_device_report_driver(const nubo_device_report* report,
                                                 nubo_driver_info* out) {
  return guard("nubo_device_report_driver", [&] {
    require_report(report).driver.read(0, out, "the report", "drivers", "nubo_driver_info");
  });
}

NUBO_C_API nubo_status nubo_device_report_link(const nubo_device_report* report, size_t i, size_t j,
                                               nubo_link_info* out) {
  return guard("nubo_device_report_link", [&] {
    const nubo::capi::Report& r = require_report(report);
    const std::size_t n = r.devices.size();
    require_device_index(r, i, "i");
    require_device_index(r, j, "j");
    r.links.read(i * n + j, out, "the report", "links", "nubo_link_info");
  });
}

NUBO_C_API nubo_status nubo_device_report_diagnosis(const nubo_device_report* report, size_t index,
                                                    nubo_diagnosis_info* out) {
  return guard("nubo_device_report_diagnosis", [&] {
    require_report(report).diagnoses.read(index, out, "the report", "diagnoses",
                                          "nubo_diagnosis_info");
  });
}

NUBO_C_API nubo_status nubo_device_report_nic(const nubo_device_report* report, size_t index,
                                              nubo_nic_info* out) {
  return guard("nubo_device_report_nic", [&] {
    require_report(report).nics.read(index, out, "the report", "NICs", "nubo_nic_info");
  });
}

NUBO_C_API nubo_status nubo_device_report_gpu_nic(const nubo_device_report* report, size_t gpu,
                                                  size_t nic, nubo_link_info* out) {
  return guard("nubo_device_report_gpu_nic", [&] {
    const nubo::capi::Report& r = require_report(report);
    require_device_index(r, gpu, "gpu");
    const std::size_t n = r.nics.size();
    nubo::capi::require_index(nic, n, "the report", "NICs");
    r.gpu_nic_links.read(gpu * n + nic, out, "the report", "GPU-to-NIC links", "nubo_link_info");
  });
}

NUBO_C_API int nubo_device_report_preferred_nic(const nubo_device_report* report, size_t gpu) {
  if (!report) return -1;
  const auto& preferred = nubo::capi::from_handle(report)->report.preferred_nic;
  return gpu < preferred.size() ? preferred[gpu] : -1;
}

}  // extern "C"
