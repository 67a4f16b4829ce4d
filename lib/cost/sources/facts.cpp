#include "cost/sources/facts.hpp"

#include <map>
#include <string>

#include "common/csv.hpp"
#include "common/text.hpp"
#include "device/backend/gpu_catalog.hpp"

namespace nubo::embedded {
std::string_view cost_instance_facts_csv();  // generated from lib/cost/sources/instance_facts.csv
}

namespace nubo::cost::sources {
namespace {

Interconnect parse(const csv::Row& row) {
  const auto s = text::lower(row.str("interconnect"));
  if (s == "none") return Interconnect::none;
  if (s == "pcie") return Interconnect::pcie;
  if (s == "nvlink") return Interconnect::nvlink;
  if (s == "nvswitch") return Interconnect::nvswitch;
  row.fail("interconnect: expected none, pcie, nvlink or nvswitch, got '" + s + "'");
}

const std::map<std::pair<std::string, std::string>, InstanceFacts>& table() {
  static const auto t = [] {
    std::map<std::pair<std::string, std::string>, InstanceFacts> out;
    auto csv =
        csv::Table::parse(embedded::cost_instance_facts_csv(), "embedded instance_facts.csv",
                          {"provider", "instance", "interconnect", "network_gbps", "gpu_model"});
    for (const auto& row : csv.rows()) {
      const auto gpu = row.str("gpu_model");
      out[{text::lower(row.str("provider")), text::lower(row.str("instance"))}] = {
          parse(row), row.number("network_gbps", 0, 1e5, 0),
          gpu.empty() ? nullptr : &nubo::detail::GpuCatalog::builtin().get(gpu)};
    }
    return out;
  }();
  return t;
}

}  // namespace

const InstanceFacts* facts_of(std::string_view provider, std::string_view instance) {
  auto it = table().find({text::lower(provider), text::lower(instance)});
  return it == table().end() ? nullptr : &it->second;
}

Interconnect implied_interconnect(const nubo::detail::GpuModel& gpu, int gpus) {
  if (gpus <= 1) return Interconnect::none;
  if (gpu.nvlink_links == 0) return Interconnect::pcie;
  if (gpu.nvswitch && gpus == 8) return Interconnect::nvswitch;
  return gpu.sxm ? Interconnect::nvlink : Interconnect::pcie;
}

}  // namespace nubo::cost::sources
