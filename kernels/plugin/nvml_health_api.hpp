// The NVML entry points of the health report, beside the discovery ones (nvml_api.hpp). All
// optional: an older driver or a GPU that lacks one leaves its facts unknown.
#pragma once

#include "nvml_api.hpp"

namespace nubo::cuda_plugin::nvml {

struct EventData {  // nvmlEventData_t
  Device device;
  unsigned long long event_type, event_data;
  unsigned int gpu_instance_id, compute_instance_id;
};
using EventSet = struct nvmlEventSet_st*;
constexpr unsigned long long kEventXidCriticalError = 0x8;  // nvmlEventTypeXidCriticalError

struct ProcessInfo {  // nvmlProcessInfo_t (v2), as _v3 of the process queries fills it
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id, compute_instance_id;
};

struct FabricInfo {  // nvmlGpuFabricInfo_t
  unsigned char cluster_uuid[16];
  Return status;
  unsigned int clique_id;
  unsigned char state;
};

struct HealthApi {
  Return (*total_ecc_errors)(Device, int, int, unsigned long long*) = nullptr;
  Return (*ecc_mode)(Device, int*, int*) = nullptr;
  Return (*retired_pages_pending)(Device, int*) = nullptr;
  Return (*remapped_rows)(Device, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  Return (*clocks_event_reasons)(Device, unsigned long long*) = nullptr;
  Return (*temperature)(Device, int, unsigned*) = nullptr;
  Return (*temperature_threshold)(Device, int, unsigned*) = nullptr;
  Return (*power_usage)(Device, unsigned*) = nullptr;
  Return (*enforced_power_limit)(Device, unsigned*) = nullptr;
  Return (*pcie_gen)(Device, unsigned*) = nullptr;
  Return (*pcie_width)(Device, unsigned*) = nullptr;
  Return (*pcie_gen_max)(Device, unsigned*) = nullptr;
  Return (*pcie_width_max)(Device, unsigned*) = nullptr;
  Return (*pcie_replays)(Device, unsigned*) = nullptr;
  Return (*persistence_mode)(Device, int*) = nullptr;
  Return (*nvlink_state)(Device, unsigned, int*) = nullptr;
  Return (*nvlink_error_counter)(Device, unsigned, int, unsigned long long*) = nullptr;
  Return (*fabric_info)(Device, FabricInfo*) = nullptr;
  Return (*compute_processes)(Device, unsigned*, ProcessInfo*) = nullptr;
  Return (*event_set_create)(EventSet*) = nullptr;
  Return (*register_events)(Device, unsigned long long, EventSet) = nullptr;
  Return (*event_set_wait)(EventSet, EventData*, unsigned) = nullptr;
  Return (*event_set_free)(EventSet) = nullptr;

  explicit HealthApi(void* library);
};

}  // namespace nubo::cuda_plugin::nvml
