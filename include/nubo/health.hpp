// GPU health, as NVML and the kernel log tell it: XID errors, ECC errors, retired pages and
// remapped rows, throttling, temperature and power, PCIe and NVLink state and errors, the
// Fabric Manager, and the other processes on each GPU. Every finding is ok, warn or fail, with
// what a person should do about it. docs/diagnoses.md lists every finding.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nubo/device.hpp"
#include "nubo/export.hpp"

namespace nubo::device {

enum class HealthStatus { ok, warn, fail };
NUBO_API std::string_view health_status_name(HealthStatus s) noexcept;

// What to do about a finding, mildest first.
enum class Action { none, restart_application, reset_gpu, drain_node, replace_gpu };
// "none", "restart-application", "reset-gpu", "drain-node", "replace-gpu".
NUBO_API std::string_view action_name(Action a) noexcept;

struct Finding {
  std::string code;  // e.g. "xid-79", "ecc-dbe", "remap-pending", "pcie-width", "busy"
  int device = -1;   // nubo's device index; -1: a GPU nubo does not list, or the whole machine
  std::string pci_bus_id;  // the GPU's, "" for the machine
  HealthStatus status = HealthStatus::ok;
  Action action = Action::none;
  std::string message;  // what was seen, e.g. "XID 79: the GPU has fallen off the bus"
};

// Counts are -1 where NVML does not know them or the GPU lacks them.
struct GpuHealth {
  int device = -1;  // nubo's index; -1 when nubo does not list it (CUDA_VISIBLE_DEVICES)
  std::string uuid, pci_bus_id;
  std::int64_t ecc_sbe_volatile = -1, ecc_dbe_volatile = -1;
  std::int64_t ecc_sbe_aggregate = -1, ecc_dbe_aggregate = -1;
  int retired_pages_pending = -1;
  int remapped_correctable = -1, remapped_uncorrectable = -1;
  int remap_pending = -1, remap_failed = -1;
  std::vector<std::string> clock_events;  // "hw-slowdown", "sw-thermal", "sw-power-cap", ...
  int temperature_c = -1, temperature_slowdown_c = -1;
  double power_w = -1, power_limit_w = -1;
  int pcie_gen = -1, pcie_width = -1, pcie_gen_max = -1, pcie_width_max = -1;
  std::int64_t pcie_replays = -1;
  int nvlinks_up = 0, nvlinks_down = 0;
  std::int64_t nvlink_errors = 0;  // CRC, replay and recovery counts over all links
  std::string fabric;              // "", "not-started", "in-progress", "completed", "failed"
  int persistence_mode = -1, mig_mode = -1;
  struct Process {
    std::uint32_t pid = 0;
    std::uint64_t used_memory = 0;  // bytes
  };
  std::vector<Process> processes;  // compute processes, this one included
};

// "GPU 3 (00000000:3b:00.0) failed: XID 79: the GPU has fallen off the bus (...) (action:
// drain-node)": how a watch reports a fatal finding (nubo-run, a team's collectives).
NUBO_API std::string failure_text(const Finding& f);

// An XID's status and action, by number; the table (docs/diagnoses.md) can be overridden.
struct XidRule {
  int xid = 0;
  HealthStatus status = HealthStatus::warn;
  Action action = Action::none;
  std::string meaning;
};

struct HealthOptions {
  // How long to wait for new XID events (a watch's interval); 0 reads what is there now.
  double wait_seconds = 0;
  // Overrides of the XID table: a file of lines "XID STATUS ACTION [meaning]", e.g.
  // "79 fail drain-node"; "" for none. Errors name the file and line.
  std::string xid_policy_file;
  // The kernel log to read `NVRM: Xid` lines from: "" for /dev/kmsg; a file in dmesg's format
  // for a saved log.
  std::string kernel_log_file;
};

class NUBO_API HealthReport {
 public:
  std::string source;  // "nvml", or why there is no NVML ("no CUDA plugin: ...")
  std::vector<GpuHealth> gpus;
  std::vector<Finding> findings;
  std::string kernel_log;  // "read", or why it could not be read (dmesg_restrict...)
  HealthStatus status = HealthStatus::ok;  // the worst finding's

  // nubo-smi health's exit status: 0 ok, 4 warn, 5 fail.
  int exit_status() const noexcept;
  // Findings of one GPU (by nubo index), worst first.
  std::vector<Finding> findings_for(int device) const;
  std::string to_json() const;  // schema: docs/health.schema.json
};

// The built-in XID table, and the table with a policy file's overrides applied.
NUBO_API std::vector<XidRule> xid_table();
NUBO_API std::vector<XidRule> xid_table(const std::string& policy_file);

// Reads the health of every GPU NVML lists, matched to the report's devices by PCI address.
// Never throws for a machine without NVML (source says why); a bad policy file or option is
// Error(invalid_argument).
NUBO_API HealthReport health(const DeviceReport& report, const HealthOptions& options = {});

// Watches the GPUs' health during a job, at low cost: a thread reads the health report about
// once per `interval_seconds` (NVML's event wait in between, so a critical XID is seen as it
// happens) and calls `on_fatal` once, from that thread, with the first new `fail` finding: one
// that was not there when the watch started. The watch stops when it is destroyed.
class NUBO_API HealthWatch {
 public:
  HealthWatch(const DeviceReport& report, double interval_seconds,
              std::function<void(const Finding&)> on_fatal, HealthOptions options = {});
  ~HealthWatch();
  HealthWatch(const HealthWatch&) = delete;
  HealthWatch& operator=(const HealthWatch&) = delete;

 private:
  struct State;
  static void run(State& s);
  std::shared_ptr<State> state_;
};

}  // namespace nubo::device
