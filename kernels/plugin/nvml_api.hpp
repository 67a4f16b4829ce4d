// The few NVML declarations nubo needs. The toolkit ships no nvml.h here and NVML is loaded
// with dlopen anyway; its ABI is stable (these are the versioned entry points of nvml.h).
#pragma once

namespace nubo::cuda_plugin::nvml {

using Return = int;  // nvmlReturn_t
constexpr Return kSuccess = 0;
using Device = struct nvmlDevice_st*;  // nvmlDevice_t

// nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 and nvmlDeviceGetNvLinkRemotePciInfo_v2 fill it.
struct PciInfo {
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_subsystem_id;
  char bus_id[32];
};

struct Memory {  // nvmlMemory_t (v1)
  unsigned long long total, free, used;
};

constexpr unsigned kNvLinkMaxLinks = 18;         // NVML_NVLINK_MAX_LINKS
constexpr int kEnableStateEnabled = 1;           // NVML_FEATURE_ENABLED
constexpr unsigned kNvLinkDeviceTypeGpu = 0;     // NVML_NVLINK_DEVICE_TYPE_GPU
constexpr unsigned kNvLinkDeviceTypeSwitch = 2;  // NVML_NVLINK_DEVICE_TYPE_SWITCH
constexpr unsigned kNameSize = 96;               // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidSize = 96;               // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kDriverVersionSize = 80;      // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

// Pointers to the entry points, filled by dlsym; optional ones may stay null.
struct Api {
  Return (*init)() = nullptr;  // nvmlInit_v2
  Return (*shutdown)() = nullptr;
  const char* (*error_string)(Return) = nullptr;
  Return (*system_get_driver_version)(char*, unsigned) = nullptr;
  Return (*device_get_count)(unsigned*) = nullptr;                    // _v2
  Return (*device_get_handle_by_index)(unsigned, Device*) = nullptr;  // _v2
  Return (*device_get_name)(Device, char*, unsigned) = nullptr;
  Return (*device_get_uuid)(Device, char*, unsigned) = nullptr;
  Return (*device_get_pci_info)(Device, PciInfo*) = nullptr;  // _v3
  Return (*device_get_memory_info)(Device, Memory*) = nullptr;
  Return (*device_get_mig_mode)(Device, unsigned*, unsigned*) = nullptr;
  Return (*device_get_numa_node_id)(Device, unsigned*) = nullptr;
  Return (*device_get_topology_common_ancestor)(Device, Device, int*) = nullptr;
  Return (*device_get_nvlink_state)(Device, unsigned, int*) = nullptr;
  Return (*device_get_nvlink_remote_pci_info)(Device, unsigned, PciInfo*) = nullptr;  // _v2
  Return (*device_get_nvlink_remote_device_type)(Device, unsigned, unsigned*) = nullptr;

  explicit Api(void* library);
  // Names the first entry point nubo cannot do without, or nullptr when all are there.
  const char* missing_required() const;
};

}  // namespace nubo::cuda_plugin::nvml
