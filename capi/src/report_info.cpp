// Reading a report through the C ABI: counts and the info structs.
#include "guard.hpp"
#include "nubo.h"
#include "nubo/device.hpp"
#include "report.hpp"
#include "sized_struct.hpp"

namespace {

using nubo::capi::guard;
using nubo::capi::require;
using nubo::capi::require_device_index;
using nubo::capi::require_report;
using nubo::capi::write_sized;

// Explicit switches rather than casts: the C values are frozen, the C++ enums may grow.
nubo_backend to_c(nubo::Backend b) {
  switch (b) {
    case nubo::Backend::host:
      return NUBO_BACKEND_HOST;
    case nubo::Backend::sim:
      return NUBO_BACKEND_SIM;
    case nubo::Backend::cuda:
      return NUBO_BACKEND_CUDA;
  }
  throw nubo::Error(nubo::Errc::internal, "a device has a backend the C ABI does not know");
}

nubo_link_kind to_c(nubo::LinkKind k) {
  switch (k) {
    case nubo::LinkKind::self:
      return NUBO_LINK_SELF;
    case nubo::LinkKind::nvlink:
      return NUBO_LINK_NVLINK;
    case nubo::LinkKind::pix:
      return NUBO_LINK_PIX;
    case nubo::LinkKind::pxb:
      return NUBO_LINK_PXB;
    case nubo::LinkKind::phb:
      return NUBO_LINK_PHB;
    case nubo::LinkKind::node:
      return NUBO_LINK_NODE;
    case nubo::LinkKind::sys:
      return NUBO_LINK_SYS;
    case nubo::LinkKind::unknown:
      return NUBO_LINK_UNKNOWN;
  }
  return NUBO_LINK_UNKNOWN;
}

nubo_severity to_c(nubo::Severity s) {
  switch (s) {
    case nubo::Severity::info:
      return NUBO_SEVERITY_INFO;
    case nubo::Severity::warning:
      return NUBO_SEVERITY_WARNING;
    case nubo::Severity::error:
      return NUBO_SEVERITY_ERROR;
  }
  return NUBO_SEVERITY_ERROR;
}

nubo_device_info to_c(const nubo::Device& d) {
  nubo_device_info info{};
  info.backend = to_c(d.backend);
  info.index = d.index;
  info.ordinal = d.ordinal;
  info.name = d.name.c_str();
  info.model = d.model.c_str();
  info.uuid = d.uuid.c_str();
  info.pci_bus_id = d.pci_bus_id.c_str();
  info.cc_major = d.cc_major;
  info.cc_minor = d.cc_minor;
  info.multiprocessors = d.multiprocessors;
  info.clock_mhz = d.clock_mhz;
  info.memory_total = d.memory_total;
  info.memory_free = d.memory_free;
  info.memory_bandwidth_gbs = d.memory_bandwidth_gbs;
  info.peak_tflops_fp32 = d.peak.fp32;
  info.peak_tflops_tf32 = d.peak.tf32;
  info.peak_tflops_fp16 = d.peak.fp16;
  info.peak_tflops_bf16 = d.peak.bf16;
  info.peak_source = d.peak_source.c_str();
  info.numa_node = d.numa_node;
  info.mig_enabled = d.mig_enabled ? 1 : 0;
  return info;
}

}  // namespace

extern "C" {

NUBO_C_API size_t nubo_device_report_device_count(const nubo_device_report* report) {
  return report == nullptr ? 0 : nubo::capi::from_handle(report)->report.devices.size();
}

NUBO_C_API size_t nubo_device_report_diagnosis_count(const nubo_device_report* report) {
  return report == nullptr ? 0 : nubo::capi::from_handle(report)->report.diagnoses.size();
}

NUBO_C_API nubo_status nubo_device_report_device(const nubo_device_report* report, size_t index,
                                                 nubo_device_info* out) {
  return guard("nubo_device_report_device", [&] {
    const nubo::capi::Report& r = require_report(report);
    require(out, "out");
    const nubo::Device& d = r.report.devices[require_device_index(r, index, "index")];
    write_sized(to_c(d), out, "out", "nubo_device_info");
  });
}

NUBO_C_API nubo_status nubo_device_report_host(const nubo_device_report* report,
                                               nubo_host_info* out) {
  return guard("nubo_device_report_host", [&] {
    const nubo::HostCpu& h = require_report(report).report.host;
    require(out, "out");
    nubo_host_info info{};
    info.model = h.model.c_str();
    info.logical_cores = h.logical_cores;
    info.physical_cores = h.physical_cores;
    info.sockets = h.sockets;
    info.numa_nodes = h.numa_nodes;
    info.memory_total = h.memory_total;
    info.memory_available = h.memory_available;
    info.blas = h.blas.c_str();
    write_sized(info, out, "out", "nubo_host_info");
  });
}

NUBO_C_API nubo_status nubo_device_report_driver(const nubo_device_report* report,
                                                 nubo_driver_info* out) {
  return guard("nubo_device_report_driver", [&] {
    const nubo::DriverInfo& d = require_report(report).report.driver;
    require(out, "out");
    nubo_driver_info info{};
    info.loaded = d.loaded ? 1 : 0;
    info.driver_version = d.driver_version;
    info.runtime_version = d.runtime_version;
    info.driver_release = d.driver_release.c_str();
    write_sized(info, out, "out", "nubo_driver_info");
  });
}

NUBO_C_API nubo_status nubo_device_report_link(const nubo_device_report* report, size_t i, size_t j,
                                               nubo_link_info* out) {
  return guard("nubo_device_report_link", [&] {
    const nubo::capi::Report& r = require_report(report);
    require(out, "out");
    require_device_index(r, i, "i");
    require_device_index(r, j, "j");
    if (i >= r.report.links.size() || j >= r.report.links[i].size()) {
      throw nubo::Error(nubo::Errc::internal,
                        "the report's link matrix is smaller than its devices");
    }
    const nubo::Link& link = r.report.links[i][j];
    nubo_link_info info{};
    info.kind = to_c(link.kind);
    info.nvlinks = link.nvlinks;
    info.peer_access = link.peer_access ? 1 : 0;
    info.name = r.link_names[i][j].c_str();
    write_sized(info, out, "out", "nubo_link_info");
  });
}

NUBO_C_API nubo_status nubo_device_report_diagnosis(const nubo_device_report* report, size_t index,
                                                    nubo_diagnosis_info* out) {
  return guard("nubo_device_report_diagnosis", [&] {
    const nubo::capi::Report& r = require_report(report);
    require(out, "out");
    const std::size_t n = r.report.diagnoses.size();
    if (index >= n) {
      throw nubo::Error(nubo::Errc::invalid_argument,
                        "index " + std::to_string(index) + " is out of range: the report has " +
                            std::to_string(n) + (n == 1 ? " diagnosis" : " diagnoses"));
    }
    const nubo::Diagnosis& d = r.report.diagnoses[index];
    nubo_diagnosis_info info{};
    info.code = d.code.c_str();
    info.severity = to_c(d.severity);
    info.message = d.message.c_str();
    info.advice = d.advice.c_str();
    write_sized(info, out, "out", "nubo_diagnosis_info");
  });
}

NUBO_C_API size_t nubo_device_report_nic_count(const nubo_device_report* report) {
  return report ? nubo::capi::from_handle(report)->report.nics.size() : 0;
}

NUBO_C_API nubo_status nubo_device_report_nic(const nubo_device_report* report, size_t index,
                                              nubo_nic_info* out) {
  return guard("nubo_device_report_nic", [&] {
    const nubo::capi::Report& r = require_report(report);
    require(out, "out");
    const std::size_t n = r.report.nics.size();
    if (index >= n)
      throw nubo::Error(nubo::Errc::invalid_argument,
                        "index " + std::to_string(index) + " is out of range: the report has " +
                            std::to_string(n) + (n == 1 ? " NIC" : " NICs"));
    const nubo::Nic& nic = r.report.nics[index];
    nubo_nic_info info{};
    info.name = nic.name.c_str();
    info.kind = nic.kind.c_str();
    info.interface = nic.interface.c_str();
    info.pci_bus_id = nic.pci_bus_id.c_str();
    info.numa_node = nic.numa_node;
    info.rate_gbps = nic.rate_gbps;
    write_sized(info, out, "out", "nubo_nic_info");
  });
}

NUBO_C_API nubo_status nubo_device_report_gpu_nic(const nubo_device_report* report, size_t gpu,
                                                  size_t nic, nubo_link_info* out) {
  return guard("nubo_device_report_gpu_nic", [&] {
    const nubo::capi::Report& r = require_report(report);
    require(out, "out");
    require_device_index(r, gpu, "gpu");
    const std::size_t n = r.report.nics.size();
    if (nic >= n)
      throw nubo::Error(nubo::Errc::invalid_argument,
                        "nic " + std::to_string(nic) + " is out of range: the report has " +
                            std::to_string(n) + (n == 1 ? " NIC" : " NICs"));
    if (gpu >= r.report.gpu_nic.size() || nic >= r.report.gpu_nic[gpu].size())
      throw nubo::Error(nubo::Errc::internal, "the report's GPU-to-NIC matrix is too small");
    nubo_link_info info{};
    info.kind = to_c(r.report.gpu_nic[gpu][nic]);
    info.name = r.gpu_nic_names[gpu][nic].c_str();
    write_sized(info, out, "out", "nubo_link_info");
  });
}

NUBO_C_API int nubo_device_report_preferred_nic(const nubo_device_report* report, size_t gpu) {
  if (!report) return -1;
  const auto& preferred = nubo::capi::from_handle(report)->report.preferred_nic;
  return gpu < preferred.size() ? preferred[gpu] : -1;
}

}  // extern "C"
