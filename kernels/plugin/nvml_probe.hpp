// What NVML (libnvidia-ml.so.1, loaded with dlopen) says about every GPU of the machine: the
// driver release, memory, MIG mode, NUMA node, and the topology between each pair of GPUs.
#pragma once

#include "nubo_plugin/cuda_plugin_abi.h"

namespace nubo::cuda_plugin {

// Fills the nvml_* fields, driver_release, topology_level and nvlinks. Never throws.
void probe_nvml(nubo_cuda_facts& facts) noexcept;

}  // namespace nubo::cuda_plugin
