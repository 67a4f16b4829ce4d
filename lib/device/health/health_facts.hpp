// Asks the CUDA plugin for the health facts of every GPU (nubo_cuda_plugin_health), and judges
// them: facts in, GpuHealth and findings out, so the rules are tested without a GPU.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "device/health/kernel_log.hpp"
#include "nubo/health.hpp"
#include "nubo_plugin/cuda_plugin_abi.h"

namespace nubo::detail {

struct HealthFacts {
  std::unique_ptr<nubo_cuda_health> facts;  // null when there are none
  std::string source;                       // "nvml", or why there are no facts
};

// Never throws: no plugin, no NVML, or an older plugin is a source saying so.
HealthFacts read_health_facts(int wait_ms);

// Everything the facts (null when NVML gave none) and the kernel log say, judged by the XID
// table. `report` maps PCI addresses to nubo's device indices.
void judge_health(const nubo_cuda_health* facts, const std::vector<KernelXid>& kernel_xids,
                  const std::vector<device::XidRule>& xids, const DeviceReport& report,
                  device::HealthReport& out);

// One reading of the health: the plugin's facts (waiting `wait_seconds` for XID events) and what
// the kernel log gained since `log` was last read, judged by `xids`. health() reads once; a
// watch keeps its log and table and reads again and again.
device::HealthReport read_health(const DeviceReport& report, double wait_seconds,
                                 const std::vector<device::XidRule>& xids, KernelLog& log);

}  // namespace nubo::detail
