#include "check.hpp"

#include <cstdio>
#include <sstream>

namespace nubo_smi {
namespace {

using nubo::device::Verdict;

std::string where(int device, int peer) {
  if (device < 0) return "host";
  std::string s = "GPU" + std::to_string(device);
  if (peer >= 0) s += "<-GPU" + std::to_string(peer);
  return s;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : "%.1f", v);
  return buf;
}

std::string percent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", ratio * 100);
  return buf;
}

}  // namespace

std::string preflight_text(const nubo::device::PreflightReport& r) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-14s %-22s %10s %10s %-8s %6s  %s\n", "where", "check",
                "measured", "expected", "unit", "ratio", "verdict");
  out << line;
  for (const auto& m : r.measurements) {
    std::snprintf(line, sizeof line, "%-14s %-22s %10s %10s %-8s %6s  %s\n",
                  where(m.device, m.peer).c_str(), m.check.c_str(), number(m.measured).c_str(),
                  m.expected > 0 ? number(m.expected).c_str() : "-", m.unit.c_str(),
                  m.expected > 0 ? percent(m.ratio).c_str() : "-",
                  m.expected > 0 || m.verdict != Verdict::healthy
                      ? std::string(nubo::device::verdict_name(m.verdict)).c_str()
                      : "measured");
    out << line;
    if (!m.note.empty()) out << "               " << m.note << "\n";
  }
  for (const auto& f : r.findings)
    out << "GPU" << f.device << ": " << nubo::device::health_status_name(f.status) << " " << f.code
        << ": " << f.message << " (action: " << nubo::device::action_name(f.action) << ")\n";
  out << "\n";
  for (const auto& v : r.devices) {
    out << "GPU" << v.device << ": " << nubo::device::verdict_name(v.verdict);
    if (!v.reason.empty()) out << " (" << v.reason << ")";
    out << "\n";
  }
  std::snprintf(line, sizeof line, "\nGroup: %s  (threshold %.2f of expected, %.1f s)\n",
                std::string(nubo::device::verdict_name(r.verdict)).c_str(), r.threshold, r.seconds);
  out << line;
  return out.str();
}

std::string health_text(const nubo::device::HealthReport& r) {
  std::ostringstream out;
  out << "Health source: " << r.source << "\nKernel log: " << r.kernel_log << "\n";
  for (const auto& g : r.gpus) {
    out << "\n"
        << (g.device >= 0 ? "GPU" + std::to_string(g.device) : std::string("GPU -")) << "  "
        << g.pci_bus_id << "  " << g.uuid << "\n";
    char line[512];
    std::snprintf(line, sizeof line,
                  "  ECC dbe %lld/%lld sbe %lld/%lld (volatile/aggregate)  remap pending %d "
                  "failed %d\n",
                  static_cast<long long>(g.ecc_dbe_volatile),
                  static_cast<long long>(g.ecc_dbe_aggregate),
                  static_cast<long long>(g.ecc_sbe_volatile),
                  static_cast<long long>(g.ecc_sbe_aggregate), g.remap_pending, g.remap_failed);
    out << line;
    std::snprintf(line, sizeof line,
                  "  %d C (slowdown %d C)  %.0f W of %.0f W  PCIe Gen%d x%d (max Gen%d x%d), "
                  "%lld replays  NVLink %d up %d down\n",
                  g.temperature_c, g.temperature_slowdown_c, g.power_w, g.power_limit_w, g.pcie_gen,
                  g.pcie_width, g.pcie_gen_max, g.pcie_width_max,
                  static_cast<long long>(g.pcie_replays), g.nvlinks_up, g.nvlinks_down);
    out << line;
    if (!g.clock_events.empty()) {
      out << "  clock events:";
      for (const auto& e : g.clock_events) out << " " << e;
      out << "\n";
    }
  }
  out << "\n";
  if (r.findings.empty()) out << "No findings.\n";
  for (const auto& f : r.findings)
    out << (f.device >= 0 ? "GPU" + std::to_string(f.device) : f.pci_bus_id) << ": "
        << nubo::device::health_status_name(f.status) << " " << f.code << ": " << f.message
        << " (action: " << nubo::device::action_name(f.action) << ")\n";
  out << "Status: " << nubo::device::health_status_name(r.status) << "\n";
  return out.str();
}

}  // namespace nubo_smi
