// A health finding as JSON: the one form the health report and the preflight report both write
// (docs/health.schema.json, $defs/finding).
#pragma once

#include <nlohmann/json.hpp>

#include "nubo/health.hpp"

namespace nubo::detail {

inline nlohmann::json finding_json(const device::Finding& f) {
  return {{"code", f.code},
          {"device", f.device < 0 ? nlohmann::json() : nlohmann::json(f.device)},
          {"pci_bus_id", f.pci_bus_id},
          {"status", device::health_status_name(f.status)},
          {"action", device::action_name(f.action)},
          {"message", f.message}};
}

}  // namespace nubo::detail
