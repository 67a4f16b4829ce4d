// What a report produces through the C ABI: its JSON text and a selected group of devices.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "guard.hpp"
#include "nubo.h"
#include "nubo/device.hpp"
#include "report.hpp"
#include "sized_struct.hpp"
#include "text_out.hpp"

namespace {

using nubo::Errc;
using nubo::Error;

nubo_device_select_request default_request() {
  const nubo::SelectRequest cpp;  // the C defaults are the C++ defaults
  nubo_device_select_request r{};
  r.struct_size = sizeof r;
  r.count = cpp.count;
  r.min_memory = cpp.min_memory;
  r.min_cc_major = cpp.min_cc_major;
  r.min_cc_minor = cpp.min_cc_minor;
  return r;
}

}  // namespace

extern "C" {

NUBO_C_API nubo_status nubo_device_report_json(const nubo_device_report* report, char* buf,
                                               size_t capacity, size_t* needed) {
  return nubo::capi::guard("nubo_device_report_json", [&] {
    nubo::capi::copy_text_out(nubo::capi::require_report(report).json(), "the JSON", buf, capacity,
                              needed);
  });
}

NUBO_C_API nubo_status nubo_device_report_select(const nubo_device_report* report,
                                                 const nubo_device_select_request* request,
                                                 size_t* indices, size_t capacity, size_t* count) {
  return nubo::capi::guard("nubo_device_report_select", [&] {
    const nubo::capi::Report& r = nubo::capi::require_report(report);
    *nubo::capi::require(count, "count") = 0;
    nubo_device_select_request req = default_request();
    if (request != nullptr) {
      req = nubo::capi::read_sized(*request, req, "request", "nubo_device_select_request_init()");
    }
    if (req.count < 0) {
      throw Error(Errc::invalid_argument,
                  "request->count is " + std::to_string(req.count) +
                      ": ask for a number of devices, or 0 for every device that qualifies");
    }
    if (req.min_cc_major < 0 || req.min_cc_minor < 0) {
      throw Error(Errc::invalid_argument, "request->min_cc_major and min_cc_minor must be >= 0");
    }
    nubo::SelectRequest cpp;
    cpp.count = req.count;
    cpp.min_memory = req.min_memory;
    cpp.min_cc_major = req.min_cc_major;
    cpp.min_cc_minor = req.min_cc_minor;
    const std::vector<nubo::Device> group = r.report.select(cpp);

    *count = group.size();
    if (group.size() > capacity) {
      throw Error(Errc::invalid_argument,
                  "capacity " + std::to_string(capacity) + " is too small: the group has " +
                      std::to_string(group.size()) + " devices (returned in *count)");
    }
    if (!group.empty()) nubo::capi::require(indices, "indices");
    for (std::size_t k = 0; k < group.size(); ++k) {
      indices[k] = static_cast<std::size_t>(group[k].index);
    }
  });
}

NUBO_C_API nubo_status nubo_device_select_request_init(nubo_device_select_request* request,
                                                       size_t struct_size) {
  return nubo::capi::guard("nubo_device_select_request_init", [&] {
    nubo::capi::require(request, "request");
    nubo::capi::init_sized(default_request(), request, struct_size, "nubo_device_select_request");
  });
}

}  // extern "C"
