#include "nvml_probe.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>

#include "dl_symbol.hpp"
#include "fixed_text.hpp"
#include "nvml_api.hpp"
#include "sysfs_numa.hpp"

namespace nubo::cuda_plugin {

nvml::Api::Api(void* lib) {
  init = dl_symbol<decltype(init)>(lib, "nvmlInit_v2");
  shutdown = dl_symbol<decltype(shutdown)>(lib, "nvmlShutdown");
  error_string = dl_symbol<decltype(error_string)>(lib, "nvmlErrorString");
  system_get_driver_version =
      dl_symbol<decltype(system_get_driver_version)>(lib, "nvmlSystemGetDriverVersion");
  device_get_count = dl_symbol<decltype(device_get_count)>(lib, "nvmlDeviceGetCount_v2");
  device_get_handle_by_index =
      dl_symbol<decltype(device_get_handle_by_index)>(lib, "nvmlDeviceGetHandleByIndex_v2");
  device_get_name = dl_symbol<decltype(device_get_name)>(lib, "nvmlDeviceGetName");
  device_get_uuid = dl_symbol<decltype(device_get_uuid)>(lib, "nvmlDeviceGetUUID");
  device_get_pci_info = dl_symbol<decltype(device_get_pci_info)>(lib, "nvmlDeviceGetPciInfo_v3");
  device_get_memory_info =
      dl_symbol<decltype(device_get_memory_info)>(lib, "nvmlDeviceGetMemoryInfo");
  device_get_mig_mode = dl_symbol<decltype(device_get_mig_mode)>(lib, "nvmlDeviceGetMigMode");
  device_get_numa_node_id =
      dl_symbol<decltype(device_get_numa_node_id)>(lib, "nvmlDeviceGetNumaNodeId");
  device_get_topology_common_ancestor = dl_symbol<decltype(device_get_topology_common_ancestor)>(
      lib, "nvmlDeviceGetTopologyCommonAncestor");
  device_get_nvlink_state =
      dl_symbol<decltype(device_get_nvlink_state)>(lib, "nvmlDeviceGetNvLinkState");
  device_get_nvlink_remote_pci_info = dl_symbol<decltype(device_get_nvlink_remote_pci_info)>(
      lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  device_get_nvlink_remote_device_type = dl_symbol<decltype(device_get_nvlink_remote_device_type)>(
      lib, "nvmlDeviceGetNvLinkRemoteDeviceType");
}

const char* nvml::Api::missing_required() const {
  if (!init) return "nvmlInit_v2";
  if (!shutdown) return "nvmlShutdown";
  if (!device_get_count) return "nvmlDeviceGetCount_v2";
  if (!device_get_handle_by_index) return "nvmlDeviceGetHandleByIndex_v2";
  return nullptr;
}

namespace {

void record_error(const nvml::Api& api, nvml::Return result, const char* what,
                  nubo_cuda_facts& facts) {
  const char* text = api.error_string ? api.error_string(result) : nullptr;
  std::snprintf(facts.nvml_error, sizeof facts.nvml_error, "%s failed: %s (NVML error %d)", what,
                text ? text : "unknown error", result);
}

void read_device(const nvml::Api& api, nvml::Device dev, nubo_cuda_nvml_device_facts& out) {
  char text[nvml::kUuidSize] = {};
  if (api.device_get_name && api.device_get_name(dev, text, nvml::kNameSize) == nvml::kSuccess) {
    terminate_text(text);
    copy_text(out.name, text);
  }
  text[0] = '\0';
  if (api.device_get_uuid && api.device_get_uuid(dev, text, nvml::kUuidSize) == nvml::kSuccess) {
    terminate_text(text);
    copy_text(out.uuid, text);
  }
  nvml::PciInfo pci{};
  if (api.device_get_pci_info && api.device_get_pci_info(dev, &pci) == nvml::kSuccess) {
    out.pci_domain = static_cast<int32_t>(pci.domain);
    out.pci_bus = static_cast<int32_t>(pci.bus & 0xffu);
    out.pci_device = static_cast<int32_t>(pci.device & 0x1fu);
    format_bus_id(out.pci_bus_id, pci.domain, pci.bus, pci.device);
  }
  nvml::Memory memory{};
  if (api.device_get_memory_info && api.device_get_memory_info(dev, &memory) == nvml::kSuccess) {
    out.has_memory = 1;
    out.memory_total = memory.total;
    out.memory_free = memory.free;
  }
  unsigned current = 0, pending = 0;
  if (api.device_get_mig_mode && api.device_get_mig_mode(dev, &current, &pending) == nvml::kSuccess)
    out.mig_mode = current ? 1 : 0;  // anything else (NOT_SUPPORTED) leaves -1

  unsigned node = 0;
  if (api.device_get_numa_node_id && api.device_get_numa_node_id(dev, &node) == nvml::kSuccess &&
      node < 4096)
    out.numa_node = static_cast<int32_t>(node);
  else if (out.pci_domain >= 0)
    out.numa_node = sysfs_numa_node(out.pci_domain, out.pci_bus, out.pci_device);
}

// The listed GPU at a PCI address, or -1 (an NVSwitch, a CPU, or a GPU beyond the list).
int find_by_pci(const nubo_cuda_facts& facts, const nvml::PciInfo& pci) {
  for (int j = 0; j < facts.nvml_devices_listed; ++j) {
    const auto& d = facts.nvml_devices[j];
    if (static_cast<unsigned>(d.pci_domain) == pci.domain &&
        static_cast<unsigned>(d.pci_bus) == (pci.bus & 0xffu) &&
        static_cast<unsigned>(d.pci_device) == (pci.device & 0x1fu))
      return j;
  }
  return -1;
}

// Counts the active NVLinks of GPU i by where they end: another GPU (a direct link, as on
// DGX-1 or 2-GPU bridges) or an NVSwitch (HGX: every GPU reaches every other through them).
void read_nvlinks(const nvml::Api& api, nvml::Device dev, int i, nubo_cuda_facts& facts) {
  if (!api.device_get_nvlink_state || !api.device_get_nvlink_remote_pci_info) return;
  for (unsigned link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    int active = 0;
    if (api.device_get_nvlink_state(dev, link, &active) != nvml::kSuccess ||
        active != nvml::kEnableStateEnabled)
      continue;
    unsigned type = nvml::kNvLinkDeviceTypeGpu;
    const bool type_known =
        api.device_get_nvlink_remote_device_type &&
        api.device_get_nvlink_remote_device_type(dev, link, &type) == nvml::kSuccess;
    if (type_known && type == nvml::kNvLinkDeviceTypeSwitch) {
      ++facts.nvml_devices[i].nvswitch_links;
      continue;
    }
    nvml::PciInfo remote{};
    if (api.device_get_nvlink_remote_pci_info(dev, link, &remote) != nvml::kSuccess) continue;
    const int j = find_by_pci(facts, remote);
    if (j >= 0 && j != i)
      ++facts.nvlinks[i][j];
    else if (j < 0 && !type_known)
      ++facts.nvml_devices[i].nvswitch_links;  // drivers without the type query: not a GPU
  }
}

void read_all(const nvml::Api& api, nubo_cuda_facts& facts) {
  if (api.system_get_driver_version) {
    char release[nvml::kDriverVersionSize] = {};
    if (api.system_get_driver_version(release, sizeof release) == nvml::kSuccess) {
      terminate_text(release);
      copy_text(facts.driver_release, release);
    }
  }
  unsigned count = 0;
  const nvml::Return counted = api.device_get_count(&count);
  if (counted != nvml::kSuccess) {
    record_error(api, counted, "nvmlDeviceGetCount_v2", facts);
    return;
  }
  facts.nvml_device_count = static_cast<int32_t>(std::min(count, 1u << 20));
  const int listed = std::min(facts.nvml_device_count, NUBO_CUDA_MAX_DEVICES);
  nvml::Device handles[NUBO_CUDA_MAX_DEVICES] = {};
  for (int i = 0; i < listed; ++i) {
    if (api.device_get_handle_by_index(static_cast<unsigned>(i), &handles[i]) != nvml::kSuccess)
      handles[i] = nullptr;
    else
      read_device(api, handles[i], facts.nvml_devices[i]);
  }
  facts.nvml_devices_listed = listed;

  for (int i = 0; i < listed; ++i) {
    if (!handles[i]) continue;
    read_nvlinks(api, handles[i], i, facts);
    for (int j = i + 1; j < listed && api.device_get_topology_common_ancestor; ++j) {
      int level = -1;
      if (handles[j] && api.device_get_topology_common_ancestor(handles[i], handles[j], &level) ==
                            nvml::kSuccess) {
        facts.topology_level[i][j] = level;
        facts.topology_level[j][i] = level;
      }
    }
  }
}

}  // namespace

void probe_nvml(nubo_cuda_facts& facts) noexcept {
  // Kept loaded (never dlclose'd): cheap, and some NVML releases misbehave when reloaded.
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    copy_text(facts.nvml_error, why ? why : "libnvidia-ml.so.1: cannot be loaded");
    return;
  }
  facts.nvml_loaded = 1;
  const nvml::Api api(lib);
  if (const char* missing = api.missing_required()) {
    std::snprintf(facts.nvml_error, sizeof facts.nvml_error, "libnvidia-ml.so.1 does not export %s",
                  missing);
    return;
  }
  facts.nvml_init_result = api.init();
  if (facts.nvml_init_result != nvml::kSuccess) {
    record_error(api, facts.nvml_init_result, "nvmlInit_v2", facts);
    return;
  }
  read_all(api, facts);
  api.shutdown();
}

}  // namespace nubo::cuda_plugin
