// libnubo_cuda.so: the CUDA plugin. libnubo never links CUDA; it dlopens this plugin, which is
// built against the CUDA toolkit (cudart_static, so it needs no libcudart at run time) and
// reaches the driver and NVML only through dlopen, so it loads on any machine and can report
// precisely what is missing. Its one exported symbol is nubo_cuda_plugin_probe (see
// nubo_plugin/cuda_plugin_abi.h); nubo_cuda.map hides everything else, cudart
// included.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>

#include "driver_probe.hpp"
#include "fixed_text.hpp"
#include "nubo_plugin/cuda_plugin_abi.h"
#include "nvml_probe.hpp"
#include "sysfs_numa.hpp"

namespace nubo::cuda_plugin {
namespace {

// One probe at a time: the driver and NVML may be called from many threads, but setenv and the
// CUDA_DEVICE_ORDER decision must happen once, before the first cuInit.
std::mutex g_probe_mutex;

void set_unknowns(nubo_cuda_facts& f) {
  f.runtime_result = NUBO_CUDA_UNKNOWN;
  f.driver_version_result = NUBO_CUDA_UNKNOWN;
  f.init_result = NUBO_CUDA_UNKNOWN;
  f.device_count_result = NUBO_CUDA_UNKNOWN;
  f.nvml_init_result = NUBO_CUDA_UNKNOWN;
  for (auto& d : f.devices) d.nvml_index = d.numa_node = -1;
  for (auto& d : f.nvml_devices) d.mig_mode = d.numa_node = -1;
  for (auto& row : f.peer_access)
    for (auto& v : row) v = NUBO_CUDA_UNKNOWN;
  for (auto& row : f.topology_level)
    for (auto& v : row) v = NUBO_CUDA_UNKNOWN;
}

// CUDA_DEVICE_ORDER: the driver's own default is FASTEST_FIRST, which can change between runs
// and differs from nvidia-smi. nubo's default is PCI bus order, like nvidia-smi: when the
// variable is unset, the plugin sets it to PCI_BUS_ID (without overwriting) before the driver is
// initialised, so that CUDA ordinals equal nubo's indices for the whole process, including CUDA
// code the application runs later. It cannot help if the driver was initialised before nubo's
// first discovery (facts.driver_was_initialised says so); a user's own value is never changed.
void read_environment(nubo_cuda_facts& f) {
  if (!std::getenv("CUDA_DEVICE_ORDER")) {
    ::setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0);
    f.device_order_set = 1;
  }
  copy_text(f.device_order, std::getenv("CUDA_DEVICE_ORDER"));

  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    f.visible_devices_set = 1;
    f.visible_devices_truncated = std::strlen(visible) >= sizeof f.visible_devices ? 1 : 0;
    copy_text(f.visible_devices, visible);
  }
}

void read_runtime(nubo_cuda_facts& f) {
  // Answers from the static runtime itself: no driver call, so it works on any machine.
  int version = 0;
  f.runtime_result = static_cast<int32_t>(cudaRuntimeGetVersion(&version));
  if (f.runtime_result == 0) f.runtime_version = version;
}

bool same_pci(const nubo_cuda_device_facts& c, const nubo_cuda_nvml_device_facts& n) {
  return c.pci_domain == n.pci_domain && c.pci_bus == n.pci_bus && c.pci_device == n.pci_device;
}

// Links each CUDA device to its NVML entry (PCI address first, UUID as a fallback), which
// carries free memory, MIG mode, NUMA node and topology.
void match_devices(nubo_cuda_facts& f) {
  for (int i = 0; i < f.devices_listed; ++i) {
    auto& dev = f.devices[i];
    for (int j = 0; j < f.nvml_devices_listed && dev.nvml_index < 0; ++j)
      if (same_pci(dev, f.nvml_devices[j])) dev.nvml_index = j;
    for (int j = 0; j < f.nvml_devices_listed && dev.nvml_index < 0; ++j)
      if (dev.uuid[0] && std::strcmp(dev.uuid, f.nvml_devices[j].uuid) == 0) dev.nvml_index = j;
    dev.numa_node = dev.nvml_index >= 0
                        ? f.nvml_devices[dev.nvml_index].numa_node
                        : sysfs_numa_node(dev.pci_domain, dev.pci_bus, dev.pci_device);
  }
}

void probe(nubo_cuda_facts& f) {
  read_environment(f);
  read_runtime(f);
  probe_driver(f);
  probe_nvml(f);
  match_devices(f);
}

}  // namespace
}  // namespace nubo::cuda_plugin

extern "C" __attribute__((visibility("default"))) int nubo_cuda_plugin_probe(
    nubo_cuda_facts* out) noexcept {
  using namespace nubo::cuda_plugin;
  constexpr std::size_t header = offsetof(nubo_cuda_facts, device_order);
  if (!out || out->struct_size < header) return NUBO_CUDA_PLUGIN_BAD_ARGUMENT;
  if (out->abi_version != NUBO_CUDA_PLUGIN_ABI_VERSION) {
    out->abi_version = NUBO_CUDA_PLUGIN_ABI_VERSION;
    return NUBO_CUDA_PLUGIN_ABI_MISMATCH;
  }
  try {
    // ~100 KB: on the heap, not on a caller's possibly small thread stack.
    std::unique_ptr<nubo_cuda_facts> facts(new (std::nothrow) nubo_cuda_facts{});
    if (!facts) return NUBO_CUDA_PLUGIN_INTERNAL;
    set_unknowns(*facts);
    {
      const std::lock_guard<std::mutex> lock(g_probe_mutex);
      probe(*facts);
    }
    // Write no more than the caller's struct holds (an older libnubo has a shorter one).
    const std::size_t size = out->struct_size < sizeof *facts ? out->struct_size : sizeof *facts;
    facts->struct_size = static_cast<uint32_t>(size);
    facts->abi_version = NUBO_CUDA_PLUGIN_ABI_VERSION;
    std::memcpy(static_cast<void*>(out), facts.get(), size);
    return NUBO_CUDA_PLUGIN_OK;
  } catch (...) {
    return NUBO_CUDA_PLUGIN_INTERNAL;
  }
}
