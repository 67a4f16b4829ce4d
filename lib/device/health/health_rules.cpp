// The rules that turn health facts into findings (docs/diagnoses.md lists them). Thresholds
// follow what DCGM's health watches and gpud treat as a fault, not every non-zero counter:
// single-bit ECC errors and PCIe replays are corrected by the hardware and only a high rate
// matters.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <unordered_map>

#include "device/health/health_facts.hpp"

namespace nubo::detail {
namespace {

using device::Action;
using device::Finding;
using device::GpuHealth;
using device::HealthStatus;

constexpr std::int64_t kManySingleBitErrors = 1000;  // volatile, since the driver loaded
constexpr std::int64_t kManyPcieReplays = 100;
constexpr std::uint64_t kBusyBytes = 1ull << 30;  // another process holding 1 GiB or more

// nvmlClocksEventReason bits, with nubo's names; the first three are normal operation.
struct ClockEvent {
  std::uint64_t bit;
  const char* name;
  HealthStatus status;
};
constexpr ClockEvent kClockEvents[] = {
    {0x1, "gpu-idle", HealthStatus::ok},          {0x2, "applications-clocks", HealthStatus::ok},
    {0x4, "sw-power-cap", HealthStatus::ok},  // at its power limit under load: expected
    {0x8, "hw-slowdown", HealthStatus::warn},     {0x10, "sync-boost", HealthStatus::ok},
    {0x20, "sw-thermal", HealthStatus::warn},     {0x40, "hw-thermal", HealthStatus::warn},
    {0x80, "hw-power-brake", HealthStatus::warn}, {0x100, "display-clocks", HealthStatus::ok},
};

std::string gib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", static_cast<double>(bytes) / 1e9);
  return buf;
}

// The GPU at a PCI address: a real one, or a simulated one standing in for it (a test's
// fake driver places its GPUs where the simulated ones are).
int device_of(const DeviceReport& report, const std::string& bus_id) {
  for (const auto& d : report.devices)
    if (!bus_id.empty() && d.pci_bus_id == bus_id) return d.index;
  return -1;
}

class Judge {
 public:
  Judge(const GpuHealth& g, device::HealthReport& out) : g_(g), out_(out) {}
  void add(const char* code, HealthStatus status, Action action, std::string message) {
    out_.findings.push_back({code, g_.device, g_.pci_bus_id, status, action, std::move(message)});
  }

 private:
  const GpuHealth& g_;
  device::HealthReport& out_;
};

GpuHealth gpu_from_facts(const nubo_cuda_gpu_health& f, int device) {
  GpuHealth g;
  g.device = device;
  g.uuid = f.uuid;
  g.pci_bus_id = f.pci_bus_id;
  g.ecc_sbe_volatile = f.ecc_sbe_volatile;
  g.ecc_dbe_volatile = f.ecc_dbe_volatile;
  g.ecc_sbe_aggregate = f.ecc_sbe_aggregate;
  g.ecc_dbe_aggregate = f.ecc_dbe_aggregate;
  g.retired_pages_pending = f.retired_pages_pending;
  g.remapped_correctable = f.remap_correctable;
  g.remapped_uncorrectable = f.remap_uncorrectable;
  g.remap_pending = f.remap_pending;
  g.remap_failed = f.remap_failed;
  if (f.clock_event_reasons_known)
    for (const auto& e : kClockEvents)
      if (f.clock_event_reasons & e.bit) g.clock_events.push_back(e.name);
  g.temperature_c = f.temperature_c;
  g.temperature_slowdown_c = f.temperature_slowdown_c;
  g.power_w = f.power_mw >= 0 ? f.power_mw / 1000.0 : -1;
  g.power_limit_w = f.power_limit_mw >= 0 ? f.power_limit_mw / 1000.0 : -1;
  g.pcie_gen = f.pcie_gen;
  g.pcie_width = f.pcie_width;
  g.pcie_gen_max = f.pcie_gen_max;
  g.pcie_width_max = f.pcie_width_max;
  g.pcie_replays = f.pcie_replays;
  for (const auto& l : f.nvlinks) {
    if (l.state == 1) ++g.nvlinks_up;
    if (l.state == 0) ++g.nvlinks_down;
    for (auto n : {l.replay, l.recovery, l.crc_flit, l.crc_data})
      if (n > 0) g.nvlink_errors += n;
  }
  static constexpr const char* kFabric[] = {"", "not-started", "in-progress", "completed"};
  if (f.fabric_state >= 1 && f.fabric_state <= 3) g.fabric = kFabric[f.fabric_state];
  if (f.fabric_state == 3 && f.fabric_status != 0) g.fabric = "failed";
  g.persistence_mode = f.persistence_mode;
  g.mig_mode = f.mig_mode;
  const int listed = std::clamp(f.process_count, 0, NUBO_CUDA_MAX_PROCESSES);
  for (int i = 0; f.processes_known && i < listed; ++i)
    g.processes.push_back({f.processes[i].pid, f.processes[i].used_memory});
  return g;
}

void judge_errors(const GpuHealth& g, Judge& j) {
  if (g.ecc_dbe_volatile > 0)
    j.add("ecc-dbe", HealthStatus::fail, Action::drain_node,
          std::to_string(g.ecc_dbe_volatile) +
              " uncorrectable (double-bit) ECC errors since the driver loaded");
  else if (g.ecc_dbe_aggregate > 0)
    j.add("ecc-dbe-history", HealthStatus::warn, Action::none,
          std::to_string(g.ecc_dbe_aggregate) +
              " uncorrectable ECC errors over the GPU's life, none since the driver loaded");
  if (g.ecc_sbe_volatile >= kManySingleBitErrors)
    j.add("ecc-sbe-rate", HealthStatus::warn, Action::none,
          std::to_string(g.ecc_sbe_volatile) +
              " corrected (single-bit) ECC errors since the "
              "driver loaded");
  if (g.retired_pages_pending == 1)
    j.add("retired-pages-pending", HealthStatus::warn, Action::reset_gpu,
          "a page retirement waits for the next GPU reset");
  if (g.remap_failed == 1)
    j.add("remap-failed", HealthStatus::fail, Action::replace_gpu,
          "a row remap failed: the GPU has no spare rows left");
  else if (g.remap_pending == 1)
    j.add("remap-pending", HealthStatus::warn, Action::reset_gpu,
          "a row remap waits for the next GPU reset (" + std::to_string(g.remapped_uncorrectable) +
              " rows remapped for uncorrectable errors)");
}

void judge_clocks(const GpuHealth& g, Judge& j) {
  for (const auto& e : kClockEvents) {
    if (e.status == HealthStatus::ok) continue;
    if (std::find(g.clock_events.begin(), g.clock_events.end(), e.name) == g.clock_events.end())
      continue;
    j.add((std::string("throttle-") + e.name).c_str(), HealthStatus::warn, Action::none,
          std::string("clocks are held down: ") + e.name +
              (std::string(e.name).find("thermal") != std::string::npos
                   ? " (check the cooling)"
                   : " (check the power supply and the board)"));
  }
  if (g.temperature_c >= 0 && g.temperature_slowdown_c > 0 &&
      g.temperature_c >= g.temperature_slowdown_c)
    j.add("temperature", HealthStatus::warn, Action::none,
          std::to_string(g.temperature_c) + " C, at or above its slowdown temperature (" +
              std::to_string(g.temperature_slowdown_c) + " C)");
}

void judge_links(const GpuHealth& g, Judge& j) {
  // The generation drops when the GPU idles (power saving), so only the width is a finding
  // here; the preflight measures the link under load.
  if (g.pcie_width > 0 && g.pcie_width_max > 0 && g.pcie_width < g.pcie_width_max)
    j.add("pcie-width", HealthStatus::warn, Action::reset_gpu,
          "PCIe link at x" + std::to_string(g.pcie_width) + " of x" +
              std::to_string(g.pcie_width_max) + " (Gen" + std::to_string(g.pcie_gen) +
              "): reseat or reset; host transfers run at a fraction of their speed");
  if (g.pcie_replays >= kManyPcieReplays)
    j.add("pcie-replays", HealthStatus::warn, Action::none,
          std::to_string(g.pcie_replays) + " PCIe replays: a marginal link");
  if (g.nvlinks_down > 0 && g.nvlinks_up > 0)
    j.add("nvlink-down", HealthStatus::fail, Action::reset_gpu,
          std::to_string(g.nvlinks_down) + " of " + std::to_string(g.nvlinks_up + g.nvlinks_down) +
              " NVLinks are down");
  if (g.nvlink_errors > 0)
    j.add("nvlink-errors", HealthStatus::warn, Action::none,
          std::to_string(g.nvlink_errors) + " NVLink CRC, replay or recovery errors");
  if (g.fabric == "not-started" || g.fabric == "in-progress")
    j.add("fabric-manager", HealthStatus::fail, Action::drain_node,
          "NVSwitch fabric " + g.fabric +
              ": start nvidia-fabricmanager (CUDA fails with error 802 until it has run)");
  else if (g.fabric == "failed")
    j.add("fabric-manager", HealthStatus::fail, Action::drain_node,
          "the NVSwitch fabric failed to come up: see nvidia-fabricmanager's log");
}

void judge_use(const GpuHealth& g, Judge& j) {
  const auto self = static_cast<std::uint32_t>(::getpid());
  for (const auto& p : g.processes)
    if (p.pid != self && p.used_memory >= kBusyBytes)
      j.add("busy", HealthStatus::warn, Action::none,
            "process " + std::to_string(p.pid) + " holds " + gib(p.used_memory) + " on this GPU");
}

// The XIDs already reported, each once per GPU, and the rules by XID: one lookup per event, so
// that a log of many events on many GPUs stays linear (40,000 took 3.3 s when each scanned
// every finding before it).
struct XidJudge {
  std::unordered_map<int, const device::XidRule*> rules;
  std::set<std::pair<int, std::string>> reported;

  explicit XidJudge(const std::vector<device::XidRule>& xids) {
    for (const auto& r : xids) rules.emplace(r.xid, &r);  // the first, as the table is read
  }

  void judge(int xid, const std::string& bus_id, int device, const std::string& seen,
             device::HealthReport& out) {
    if (!reported.emplace(xid, bus_id).second) return;  // once per GPU
    const auto it = rules.find(xid);
    const auto* rule = it == rules.end() ? nullptr : it->second;
    Finding f;
    f.code = "xid-" + std::to_string(xid);
    f.device = device;
    f.pci_bus_id = bus_id;
    f.status = rule ? rule->status : HealthStatus::warn;
    f.action = rule ? rule->action : Action::none;
    f.message = "XID " + std::to_string(xid) + ": " +
                (rule ? rule->meaning : std::string("not in nubo's XID table")) + " (" + seen + ")";
    out.findings.push_back(std::move(f));
  }
};

}  // namespace

void judge_health(const nubo_cuda_health* facts, const std::vector<KernelXid>& kernel_xids,
                  const std::vector<device::XidRule>& xids, const DeviceReport& report,
                  device::HealthReport& out) {
  const int listed = facts ? std::clamp(facts->gpus_listed, 0, NUBO_CUDA_MAX_DEVICES) : 0;
  for (int i = 0; i < listed; ++i) {
    const auto& f = facts->gpus[i];
    out.gpus.push_back(gpu_from_facts(f, device_of(report, f.pci_bus_id)));
    const GpuHealth& g = out.gpus.back();
    Judge j(g, out);
    judge_errors(g, j);
    judge_clocks(g, j);
    judge_links(g, j);
    judge_use(g, j);
  }
  XidJudge judge(xids);
  const int events = facts ? std::clamp(facts->xid_count, 0, NUBO_CUDA_MAX_XIDS) : 0;
  for (int k = 0; k < events; ++k) {
    const auto& e = facts->xids[k];
    const std::string bus = e.gpu >= 0 && e.gpu < listed ? facts->gpus[e.gpu].pci_bus_id : "";
    judge.judge(e.xid, bus, device_of(report, bus), "NVML event", out);
  }
  for (const auto& k : kernel_xids)
    judge.judge(k.xid, k.pci_bus_id, device_of(report, k.pci_bus_id), "kernel log: " + k.text, out);
}

}  // namespace nubo::detail
