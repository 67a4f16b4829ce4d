// The object behind the opaque nubo_device_report handle, with its C records made once: strings
// handed out in info structs point into it, so they live exactly as long as the handle.
#pragma once

#include <cstddef>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "generated/results.hpp"
#include "nubo.h"
#include "nubo/device.hpp"
#include "nubo/error.hpp"
#include "records.hpp"

namespace nubo::capi {

struct Report {
  explicit Report(nubo::DeviceReport r) : report(std::move(r)) {
    // The GPU-to-NIC matrix holds kinds; as links, they are named the way the GPU links are.
    for (const auto& row : report.gpu_nic)
      for (nubo::LinkKind k : row) gpu_nic.push_back(nubo::Link{k, 0, false});
    for (const auto& row : report.links)
      for (const nubo::Link& link : row) links_flat.push_back(&link);
    devices = {report.devices, to_nubo_device_info};
    host = {std::span(&report.host, 1), to_nubo_host_info};
    driver = {std::span(&report.driver, 1), to_nubo_driver_info};
    links = {links_flat, [](const nubo::Link* l, Texts& t) { return to_nubo_link_info(*l, t); }};
    gpu_nic_links = {gpu_nic, to_nubo_link_info};
    nics = {report.nics, to_nubo_nic_info};
    diagnoses = {report.diagnoses, to_nubo_diagnosis_info};
  }

  // The JSON text, made once: the two calls of the needed-size protocol then agree, and several
  // threads may read one report at once.
  const std::string& json() const {
    std::call_once(json_once, [this] { json_text = report.to_json(); });
    return json_text;
  }

  nubo::DeviceReport report;
  std::vector<nubo::Link> gpu_nic;            // report.gpu_nic as links, GPU by NIC, row-major
  std::vector<const nubo::Link*> links_flat;  // report.links, row-major
  Records<nubo_device_info> devices;
  Records<nubo_host_info> host;
  Records<nubo_driver_info> driver;
  Records<nubo_link_info> links, gpu_nic_links;  // both row-major
  Records<nubo_nic_info> nics;
  Records<nubo_diagnosis_info> diagnoses;

 private:
  mutable std::once_flag json_once;
  mutable std::string json_text;
};

// The handle stays an incomplete type everywhere, as nubo.h declares it: only these casts relate
// it to the Report behind it. (Completing nubo_device_report in C++ would also drag the whole
// DeviceReport into the debug information that the ABI baseline is read from.)
inline nubo_device_report* to_handle(Report* r) {
  return reinterpret_cast<nubo_device_report*>(r);
}
inline const Report* from_handle(const nubo_device_report* h) {
  return reinterpret_cast<const Report*>(h);
}
inline Report* from_handle(nubo_device_report* h) {
  return reinterpret_cast<Report*>(h);
}

// The report behind a handle the caller must not pass as NULL.
inline const Report& require_report(const nubo_device_report* report) {
  if (report == nullptr) throw Error(Errc::invalid_argument, "report is NULL");
  return *from_handle(report);
}

// A device index checked against the report; `name` is the parameter ("index", "i", "j").
inline std::size_t require_device_index(const Report& r, std::size_t index, const char* name) {
  const std::size_t n = r.report.devices.size();
  if (index >= n) {
    throw Error(Errc::invalid_argument, std::string(name) + " " + std::to_string(index) +
                                            " is out of range: the report has " +
                                            std::to_string(n) + (n == 1 ? " device" : " devices"));
  }
  return index;
}

}  // namespace nubo::capi
