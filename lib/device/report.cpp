// DeviceReport's accessors and its JSON form (schema: docs/device-report.schema.json).
#include <nlohmann/json.hpp>

#include "common/text.hpp"
#include "nubo/device.hpp"
#include "nubo/error.hpp"
#include "nubo/version.h"

namespace nubo {

std::string_view backend_name(Backend b) noexcept {
  switch (b) {
    case Backend::host:
      return "host";
    case Backend::sim:
      return "sim";
    case Backend::cuda:
      return "cuda";
  }
  return "?";
}

std::string_view severity_name(Severity s) noexcept {
  switch (s) {
    case Severity::info:
      return "info";
    case Severity::warning:
      return "warning";
    case Severity::error:
      return "error";
  }
  return "?";
}

std::string Link::name() const {
  switch (kind) {
    case LinkKind::self:
      return "X";
    case LinkKind::nvlink:
      return "NV" + std::to_string(nvlinks);
    case LinkKind::pix:
      return "PIX";
    case LinkKind::pxb:
      return "PXB";
    case LinkKind::phb:
      return "PHB";
    case LinkKind::node:
      return "NODE";
    case LinkKind::sys:
      return "SYS";
    case LinkKind::unknown:
      break;
  }
  return "?";
}

const Link& DeviceReport::link(int i, int j) const {
  int n = static_cast<int>(devices.size());
  if (i < 0 || j < 0 || i >= n || j >= n)
    throw Error(Errc::invalid_argument, "link(" + std::to_string(i) + ", " + std::to_string(j) +
                                            "): there are " + std::to_string(n) + " devices");
  return links[i][j];
}

const Diagnosis* DeviceReport::find_diagnosis(std::string_view code) const {
  for (const auto& d : diagnoses)
    if (d.code == code) return &d;
  return nullptr;
}

Device DeviceReport::host_device() const {
  Device d;
  d.backend = Backend::host;
  d.name = host.model;
  d.model = "host";
  d.multiprocessors = host.logical_cores;
  d.memory_total = host.memory_total;
  d.memory_free = host.memory_available;
  d.numa_node = host.numa_nodes > 1 ? -1 : 0;
  return d;
}

namespace {

std::string cuda_version_string(int v) {
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

nlohmann::json device_json(const Device& d) {
  return {{"backend", backend_name(d.backend)},
          {"index", d.index},
          {"ordinal", d.ordinal},
          {"name", d.name},
          {"model", d.model},
          {"uuid", d.uuid},
          {"pci_bus_id", d.pci_bus_id},
          {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"multiprocessors", d.multiprocessors},
          {"clock_mhz", d.clock_mhz},
          {"memory_total", d.memory_total},
          {"memory_free", d.memory_free},
          {"memory_bandwidth_gbs", d.memory_bandwidth_gbs},
          {"peak_tflops",
           {{"fp32", d.peak.fp32},
            {"tf32", d.peak.tf32},
            {"fp16", d.peak.fp16},
            {"bf16", d.peak.bf16}}},
          {"peak_source", d.peak_source},
          {"numa_node", d.numa_node},
          {"mig_enabled", d.mig_enabled}};
}

}  // namespace

std::string DeviceReport::to_json() const {
  nlohmann::json j;
  j["schema"] = "nubo.device-report/1";
  j["nubo_version"] = std::to_string(NUBO_VERSION_MAJOR) + "." +
                      std::to_string(NUBO_VERSION_MINOR) + "." + std::to_string(NUBO_VERSION_PATCH);
  j["host"] = {{"model", host.model},
               {"logical_cores", host.logical_cores},
               {"physical_cores", host.physical_cores},
               {"sockets", host.sockets},
               {"numa_nodes", host.numa_nodes},
               {"memory_total", host.memory_total},
               {"memory_available", host.memory_available},
               {"blas", host.blas}};
  j["driver"] = {{"loaded", driver.loaded},
                 {"driver_version", driver.driver_version},
                 {"driver_cuda", cuda_version_string(driver.driver_version)},
                 {"runtime_version", driver.runtime_version},
                 {"runtime_cuda", cuda_version_string(driver.runtime_version)},
                 {"driver_release", driver.driver_release}};
  j["devices"] = nlohmann::json::array();
  for (const auto& d : devices) j["devices"].push_back(device_json(d));
  auto names = nlohmann::json::array(), peer = nlohmann::json::array();
  for (const auto& row : links) {
    auto n = nlohmann::json::array(), p = nlohmann::json::array();
    for (const auto& l : row) {
      n.push_back(l.name());
      p.push_back(l.peer_access);
    }
    names.push_back(n);
    peer.push_back(p);
  }
  auto nic_rows = nlohmann::json::array();
  for (const auto& row : gpu_nic) {
    auto r = nlohmann::json::array();
    for (LinkKind k : row) r.push_back(Link{k, 0, false}.name());
    nic_rows.push_back(r);
  }
  j["topology"] = {{"links", names},
                   {"peer_access", peer},
                   {"gpu_nic", nic_rows},
                   {"preferred_nic", preferred_nic}};
  j["nics"] = nlohmann::json::array();
  for (const auto& n : nics)
    j["nics"].push_back({{"name", n.name},
                         {"kind", n.kind},
                         {"interface", n.interface},
                         {"pci_bus_id", n.pci_bus_id},
                         {"numa_node", n.numa_node},
                         {"rate_gbps", n.rate_gbps}});
  j["diagnoses"] = nlohmann::json::array();
  for (const auto& d : diagnoses)
    j["diagnoses"].push_back({{"code", d.code},
                              {"severity", severity_name(d.severity)},
                              {"message", d.message},
                              {"advice", d.advice}});
  // Replace invalid UTF-8 (a device name is the driver's bytes) rather than throw.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace nubo
