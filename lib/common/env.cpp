#include "common/env.hpp"

#include <cstdlib>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::env {
namespace {

[[noreturn]] void bad_value(const char* name, const std::string& value, const char* accepts) {
  throw Error(Errc::invalid_argument,
              std::string(name) + "='" + value + "' is not valid; " + name + " accepts " + accepts);
}

std::optional<std::string> non_empty(const char* name) {
  auto v = get(name);
  if (v && text::trim(*v).empty()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::string> get(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

LogLevel log_level() {
  auto v = get("NUBO_LOG");
  if (!v || v->empty()) return LogLevel::warn;
  auto s = text::lower(text::trim(*v));
  if (s == "error") return LogLevel::error;
  if (s == "warn" || s == "warning") return LogLevel::warn;
  if (s == "info") return LogLevel::info;
  if (s == "debug") return LogLevel::debug;
  bad_value("NUBO_LOG", *v, "error, warn, info or debug");
}

std::optional<std::string> sim_devices() {
  return non_empty("NUBO_SIM_DEVICES");
}

std::optional<std::string> sim_topology() {
  return non_empty("NUBO_SIM_TOPOLOGY");
}

std::optional<std::string> cuda_plugin() {
  return non_empty("NUBO_CUDA_PLUGIN");
}

bool cuda_enabled() {
  auto v = get("NUBO_CUDA");
  if (!v || v->empty()) return true;
  auto s = text::trim(*v);
  if (s == "1") return true;
  if (s == "0") return false;
  bad_value("NUBO_CUDA", *v, "0 (skip the CUDA probe) or 1");
}

std::optional<std::string> cuda_visible_devices() {
  return get("CUDA_VISIBLE_DEVICES");
}

DeviceOrder cuda_device_order() {
  auto v = get("CUDA_DEVICE_ORDER");
  if (!v || v->empty()) return DeviceOrder::pci_bus_id;
  auto s = text::trim(*v);
  if (s == "PCI_BUS_ID") return DeviceOrder::pci_bus_id;
  if (s == "FASTEST_FIRST") return DeviceOrder::fastest_first;
  bad_value("CUDA_DEVICE_ORDER", *v, "PCI_BUS_ID or FASTEST_FIRST");
}

std::optional<std::string> token() {
  return non_empty("NUBO_TOKEN");
}

}  // namespace nubo::env
