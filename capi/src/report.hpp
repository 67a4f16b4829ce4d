// The object behind the opaque nubo_device_report handle. Strings handed out in info structs point
// into it, so they live exactly as long as the handle.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "nubo.h"
#include "nubo/device.hpp"
#include "nubo/error.hpp"

namespace nubo::capi {

struct Report {
  explicit Report(nubo::DeviceReport r) : report(std::move(r)) {
    // Link::name() returns a new string each call; nubo_link_info needs one that stays put.
    link_names.resize(report.links.size());
    for (std::size_t i = 0; i < report.links.size(); ++i) {
      for (const nubo::Link& link : report.links[i]) link_names[i].push_back(link.name());
    }
    gpu_nic_names.resize(report.gpu_nic.size());
    for (std::size_t i = 0; i < report.gpu_nic.size(); ++i) {
      for (nubo::LinkKind k : report.gpu_nic[i])
        gpu_nic_names[i].push_back(nubo::Link{k, 0, false}.name());
    }
  }

  // The JSON text, made once: the two calls of the needed-size protocol then agree, and several
  // threads may read one report at once.
  const std::string& json() const {
    std::call_once(json_once, [this] { json_text = report.to_json(); });
    return json_text;
  }

  nubo::DeviceReport report;
  std::vector<std::vector<std::string>> link_names;
  std::vector<std::vector<std::string>> gpu_nic_names;  // as link_names, GPU by NIC

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
