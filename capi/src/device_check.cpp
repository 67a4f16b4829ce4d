// nubo_device_health and nubo_device_preflight: a check handle holding the verdict, the exit
// status and the JSON text; the options go through their generated conversions.
#include <string>

#include "generated/options.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "nubo/health.hpp"
#include "nubo/preflight.hpp"
#include "report.hpp"
#include "text_out.hpp"

struct nubo_device_check {
  int verdict = 0;      // NUBO_CHECK_*
  int exit_status = 0;  // as nubo-smi
  std::string json;
};

extern "C" {

NUBO_C_API nubo_status nubo_device_health_options_init(nubo_device_health_options* options,
                                                       size_t struct_size) {
  return nubo::capi::guard("nubo_device_health_options_init", [&] {
    nubo::capi::init_options(nubo::capi::require(options, "options"), struct_size);
  });
}

NUBO_C_API nubo_status nubo_device_preflight_options_init(nubo_device_preflight_options* options,
                                                          size_t struct_size) {
  return nubo::capi::guard("nubo_device_preflight_options_init", [&] {
    nubo::capi::init_options(nubo::capi::require(options, "options"), struct_size);
  });
}

NUBO_C_API nubo_status nubo_device_health(const nubo_device_report* report,
                                          const nubo_device_health_options* options,
                                          nubo_device_check** out) {
  return nubo::capi::guard("nubo_device_health", [&] {
    *nubo::capi::require(out, "out") = nullptr;
    const auto& r = nubo::capi::require_report(report);
    const auto h = nubo::device::health(r.report, nubo::capi::read_options(options));
    *out = new nubo_device_check{static_cast<int>(h.status), h.exit_status(), h.to_json()};
  });
}

NUBO_C_API nubo_status nubo_device_preflight(const nubo_device_report* report, const int* devices,
                                             size_t device_count,
                                             const nubo_device_preflight_options* options,
                                             nubo_device_check** out) {
  return nubo::capi::guard("nubo_device_preflight", [&] {
    *nubo::capi::require(out, "out") = nullptr;
    const auto& r = nubo::capi::require_report(report);
    if (device_count > 0) nubo::capi::require(devices, "devices");
    nubo::device::PreflightOptions o = nubo::capi::read_options(options);
    o.devices.assign(devices, devices + device_count);
    const auto p = nubo::device::preflight(r.report, o);
    *out = new nubo_device_check{static_cast<int>(p.verdict), p.exit_status(), p.to_json()};
  });
}

NUBO_C_API int nubo_device_check_verdict(const nubo_device_check* check) {
  return check ? check->verdict : -1;
}

NUBO_C_API int nubo_device_check_exit_status(const nubo_device_check* check) {
  return check ? check->exit_status : -1;
}

NUBO_C_API nubo_status nubo_device_check_json(const nubo_device_check* check, char* buf,
                                              size_t capacity, size_t* needed) {
  return nubo::capi::guard("nubo_device_check_json", [&] {
    nubo::capi::copy_text_out(nubo::capi::require(check, "check")->json, "the JSON", buf, capacity,
                              needed);
  });
}

NUBO_C_API void nubo_device_check_free(nubo_device_check* check) {
  delete check;
}

}  // extern "C"
