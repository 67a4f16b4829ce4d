// nubo::device::health: the plugin's facts and the kernel log, judged; and the report as JSON.
#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "device/health/finding_json.hpp"
#include "device/health/health_facts.hpp"
#include "nubo/error.hpp"
#include "nubo/health.hpp"

namespace nubo::device {

int HealthReport::exit_status() const noexcept {
  switch (status) {
    case HealthStatus::ok:
      return 0;
    case HealthStatus::warn:
      return 4;
    case HealthStatus::fail:
      return 5;
  }
  return 5;
}

std::string failure_text(const Finding& f) {
  const std::string gpu = f.device >= 0 ? "GPU " + std::to_string(f.device) : "a GPU";
  return gpu + " (" + f.pci_bus_id + ") failed: " + f.message +
         " (action: " + std::string(action_name(f.action)) + ")";
}

std::vector<Finding> HealthReport::findings_for(int device) const {
  std::vector<Finding> out;
  for (const auto& f : findings)
    if (f.device == device) out.push_back(f);
  std::stable_sort(out.begin(), out.end(),
                   [](const Finding& a, const Finding& b) { return a.status > b.status; });
  return out;
}

namespace {

nlohmann::json number_or_null(double v) {
  return v < 0 ? nlohmann::json() : nlohmann::json(v);
}
nlohmann::json number_or_null(std::int64_t v) {
  return v < 0 ? nlohmann::json() : nlohmann::json(v);
}

nlohmann::json gpu_json(const GpuHealth& g) {
  nlohmann::json processes = nlohmann::json::array();
  for (const auto& p : g.processes)
    processes.push_back({{"pid", p.pid}, {"used_memory", p.used_memory}});
  return {{"device", g.device < 0 ? nlohmann::json() : nlohmann::json(g.device)},
          {"uuid", g.uuid},
          {"pci_bus_id", g.pci_bus_id},
          {"ecc",
           {{"sbe_volatile", number_or_null(g.ecc_sbe_volatile)},
            {"dbe_volatile", number_or_null(g.ecc_dbe_volatile)},
            {"sbe_aggregate", number_or_null(g.ecc_sbe_aggregate)},
            {"dbe_aggregate", number_or_null(g.ecc_dbe_aggregate)},
            {"retired_pages_pending", number_or_null(std::int64_t{g.retired_pages_pending})}}},
          {"remapped_rows",
           {{"correctable", number_or_null(std::int64_t{g.remapped_correctable})},
            {"uncorrectable", number_or_null(std::int64_t{g.remapped_uncorrectable})},
            {"pending", number_or_null(std::int64_t{g.remap_pending})},
            {"failed", number_or_null(std::int64_t{g.remap_failed})}}},
          {"clock_events", g.clock_events},
          {"temperature_c", number_or_null(std::int64_t{g.temperature_c})},
          {"temperature_slowdown_c", number_or_null(std::int64_t{g.temperature_slowdown_c})},
          {"power_w", number_or_null(g.power_w)},
          {"power_limit_w", number_or_null(g.power_limit_w)},
          {"pcie",
           {{"gen", number_or_null(std::int64_t{g.pcie_gen})},
            {"width", number_or_null(std::int64_t{g.pcie_width})},
            {"gen_max", number_or_null(std::int64_t{g.pcie_gen_max})},
            {"width_max", number_or_null(std::int64_t{g.pcie_width_max})},
            {"replays", number_or_null(g.pcie_replays)}}},
          {"nvlink", {{"up", g.nvlinks_up}, {"down", g.nvlinks_down}, {"errors", g.nvlink_errors}}},
          {"fabric", g.fabric},
          {"persistence_mode", number_or_null(std::int64_t{g.persistence_mode})},
          {"mig_mode", number_or_null(std::int64_t{g.mig_mode})},
          {"processes", processes}};
}

}  // namespace

std::string HealthReport::to_json() const {
  nlohmann::json gpus_json = nlohmann::json::array(), findings_json = nlohmann::json::array();
  for (const auto& g : gpus) gpus_json.push_back(gpu_json(g));
  for (const auto& f : findings) findings_json.push_back(detail::finding_json(f));
  return nlohmann::json{{"source", source},
                        {"kernel_log", kernel_log},
                        {"status", health_status_name(status)},
                        {"gpus", gpus_json},
                        {"findings", findings_json}}
      .dump(2);
}

HealthReport health(const DeviceReport& report, const HealthOptions& options) {
  if (!(options.wait_seconds >= 0) || options.wait_seconds > 24 * 3600.0)
    throw Error(Errc::invalid_argument, "health: wait_seconds must be between 0 and 86400, got " +
                                            std::to_string(options.wait_seconds));
  const auto xids = xid_table(options.xid_policy_file);  // a bad policy fails before any probe
  detail::KernelLog log(options.kernel_log_file);
  return detail::read_health(report, options.wait_seconds, xids, log);
}

}  // namespace nubo::device

namespace nubo::detail {

device::HealthReport read_health(const DeviceReport& report, double wait_seconds,
                                 const std::vector<device::XidRule>& xids, KernelLog& log) {
  device::HealthReport out;
  auto facts = read_health_facts(static_cast<int>(std::lround(wait_seconds * 1000)));
  out.source = facts.source;
  const auto kernel = log.read(out.kernel_log);
  judge_health(facts.facts.get(), kernel, xids, report, out);
  for (const auto& f : out.findings) out.status = std::max(out.status, f.status);
  return out;
}

}  // namespace nubo::detail
