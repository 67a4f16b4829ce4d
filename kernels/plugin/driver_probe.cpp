#include "driver_probe.hpp"

#include <cuda.h>
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdio>

#include "dl_symbol.hpp"
#include "fixed_text.hpp"

namespace nubo::cuda_plugin {
namespace {

// The driver API is reached only through dlsym: linking libcuda (even the toolkit's stub) would
// make the plugin fail to load on a machine without a driver, which is the case it must explain.
struct DriverApi {
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
  CUresult (*driver_get_version)(int*) = nullptr;
  CUresult (*init)(unsigned int) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*device_total_mem)(size_t*, CUdevice) = nullptr;
  CUresult (*device_get_uuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*device_can_access_peer)(int*, CUdevice, CUdevice) = nullptr;

  explicit DriverApi(void* lib) {
    get_error_name = dl_symbol<decltype(get_error_name)>(lib, "cuGetErrorName");
    driver_get_version = dl_symbol<decltype(driver_get_version)>(lib, "cuDriverGetVersion");
    init = dl_symbol<decltype(init)>(lib, "cuInit");
    device_get_count = dl_symbol<decltype(device_get_count)>(lib, "cuDeviceGetCount");
    device_get = dl_symbol<decltype(device_get)>(lib, "cuDeviceGet");
    device_get_name = dl_symbol<decltype(device_get_name)>(lib, "cuDeviceGetName");
    device_get_attribute = dl_symbol<decltype(device_get_attribute)>(lib, "cuDeviceGetAttribute");
    // The _v2 entry points take size_t / return the stable UUID; older drivers lack _v2 UUID.
    device_total_mem = dl_symbol<decltype(device_total_mem)>(lib, "cuDeviceTotalMem_v2");
    device_get_uuid = dl_symbol<decltype(device_get_uuid)>(lib, "cuDeviceGetUuid_v2");
    if (!device_get_uuid)
      device_get_uuid = dl_symbol<decltype(device_get_uuid)>(lib, "cuDeviceGetUuid");
    device_can_access_peer =
        dl_symbol<decltype(device_can_access_peer)>(lib, "cuDeviceCanAccessPeer");
  }
};

int attribute(const DriverApi& api, CUdevice_attribute which, CUdevice dev) {
  int value = 0;
  if (!api.device_get_attribute || api.device_get_attribute(&value, which, dev) != CUDA_SUCCESS)
    return 0;
  return value;
}

void read_device(const DriverApi& api, CUdevice dev, nubo_cuda_device_facts& out) {
  if (api.device_get_name) {
    char name[NUBO_CUDA_NAME_SIZE] = {};
    if (api.device_get_name(name, static_cast<int>(sizeof name - 1), dev) == CUDA_SUCCESS) {
      terminate_text(name);
      copy_text(out.name, name);
    }
  }
  out.cc_major = attribute(api, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  out.cc_minor = attribute(api, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  out.multiprocessors = attribute(api, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  out.clock_khz = attribute(api, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
  out.memory_clock_khz = attribute(api, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev);
  out.memory_bus_width_bits = attribute(api, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev);
  out.pci_domain = attribute(api, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev);
  out.pci_bus = attribute(api, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev);
  out.pci_device = attribute(api, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev);
  format_bus_id(out.pci_bus_id, static_cast<unsigned>(out.pci_domain),
                static_cast<unsigned>(out.pci_bus), static_cast<unsigned>(out.pci_device));

  size_t bytes = 0;
  if (api.device_total_mem && api.device_total_mem(&bytes, dev) == CUDA_SUCCESS)
    out.memory_total = bytes;

  CUuuid uuid{};
  if (api.device_get_uuid && api.device_get_uuid(&uuid, dev) == CUDA_SUCCESS) {
    const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
    std::snprintf(out.uuid, sizeof out.uuid,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                  b[14], b[15]);
  }
}

void read_devices(const DriverApi& api, nubo_cuda_facts& facts) {
  if (!api.device_get_count) {
    facts.device_count_result = NUBO_CUDA_MISSING_SYMBOL;
    return;
  }
  int count = 0;
  facts.device_count_result = api.device_get_count(&count);
  if (facts.device_count_result != CUDA_SUCCESS) return;
  facts.device_count = std::max(count, 0);
  const int listed = std::min(facts.device_count, NUBO_CUDA_MAX_DEVICES);

  CUdevice handles[NUBO_CUDA_MAX_DEVICES] = {};
  bool valid[NUBO_CUDA_MAX_DEVICES] = {};
  for (int i = 0; i < listed; ++i) {
    valid[i] = api.device_get && api.device_get(&handles[i], i) == CUDA_SUCCESS;
    if (valid[i]) read_device(api, handles[i], facts.devices[i]);
  }
  facts.devices_listed = listed;

  // Peer access needs cuInit but no context, so it is cheap to ask for every pair.
  for (int i = 0; i < listed; ++i) {
    for (int j = 0; j < listed; ++j) {
      if (i == j || !valid[i] || !valid[j] || !api.device_can_access_peer) continue;
      int can = 0;
      if (api.device_can_access_peer(&can, handles[i], handles[j]) == CUDA_SUCCESS)
        facts.peer_access[i][j] = can ? 1 : 0;
    }
  }
}

void record_loaded_path(void* lib, nubo_cuda_facts& facts) {
  link_map* map = nullptr;
  if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name)
    copy_text(facts.driver_path, map->l_name);
}

}  // namespace

void probe_driver(nubo_cuda_facts& facts) noexcept {
  // Never dlclose'd: the CUDA runtime (cudart_static) will use the same libcuda.so.1 later,
  // and unloading a driver library that has been initialised is not supported.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    copy_text(facts.driver_error, why ? why : "libcuda.so.1: cannot be loaded");
    return;
  }
  facts.driver_loaded = 1;
  record_loaded_path(lib, facts);
  const DriverApi api(lib);

  // cuDriverGetVersion works before cuInit, which is what lets nubo tell "no driver" from
  // "driver too old" apart (the runtime reports both as cudaErrorInsufficientDriver).
  if (api.driver_get_version) {
    int version = 0;
    facts.driver_version_result = api.driver_get_version(&version);
    if (facts.driver_version_result == CUDA_SUCCESS) facts.driver_version = version;
  } else {
    facts.driver_version_result = NUBO_CUDA_MISSING_SYMBOL;
  }

  // A driver whose CUDA major is older than the runtime's cannot run it (minor-version
  // compatibility only spans one major), so nubo asks it nothing more.
  if (facts.driver_version_result == CUDA_SUCCESS && facts.runtime_version > 0 &&
      facts.driver_version / 1000 < facts.runtime_version / 1000)
    return;

  if (!api.init) {
    facts.init_called = 1;
    facts.init_result = NUBO_CUDA_MISSING_SYMBOL;
    return;
  }
  // Before cuInit, cuDeviceGetCount answers CUDA_ERROR_NOT_INITIALIZED unless someone in this
  // process has initialised the driver already (then CUDA_DEVICE_ORDER came too late).
  if (api.device_get_count) {
    int ignored = 0;
    facts.driver_was_initialised = api.device_get_count(&ignored) == CUDA_SUCCESS ? 1 : 0;
  }
  facts.init_called = 1;
  const CUresult init = api.init(0);
  facts.init_result = static_cast<int32_t>(init);
  const char* name = nullptr;
  if (api.get_error_name && api.get_error_name(init, &name) == CUDA_SUCCESS && name)
    copy_text(facts.init_error_name, name);
  if (init != CUDA_SUCCESS) return;

  read_devices(api, facts);
}

}  // namespace nubo::cuda_plugin
