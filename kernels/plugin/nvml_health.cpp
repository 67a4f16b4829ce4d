// The health entry point: NVML's error counters, clocks, links and processes per GPU, and the
// critical XID events that arrive while it waits. Facts only; libnubo judges them.
#include <dlfcn.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>

#include "dl_symbol.hpp"
#include "fixed_text.hpp"
#include "nubo_plugin/cuda_plugin_abi.h"
#include "nvml_health_api.hpp"

namespace nubo::cuda_plugin {

nvml::HealthApi::HealthApi(void* lib) {
  auto sym = [lib](auto& fn, const char* name) {
    fn = dl_symbol<std::remove_reference_t<decltype(fn)>>(lib, name);
  };
  sym(total_ecc_errors, "nvmlDeviceGetTotalEccErrors");
  sym(ecc_mode, "nvmlDeviceGetEccMode");
  sym(retired_pages_pending, "nvmlDeviceGetRetiredPagesPendingStatus");
  sym(remapped_rows, "nvmlDeviceGetRemappedRows");
  sym(clocks_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!clocks_event_reasons)  // the name before CUDA 12.2's drivers
    sym(clocks_event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  sym(temperature, "nvmlDeviceGetTemperature");
  sym(temperature_threshold, "nvmlDeviceGetTemperatureThreshold");
  sym(power_usage, "nvmlDeviceGetPowerUsage");
  sym(enforced_power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  sym(pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
  sym(pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
  sym(pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
  sym(pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth");
  sym(pcie_replays, "nvmlDeviceGetPcieReplayCounter");
  sym(persistence_mode, "nvmlDeviceGetPersistenceMode");
  sym(nvlink_state, "nvmlDeviceGetNvLinkState");
  sym(nvlink_error_counter, "nvmlDeviceGetNvLinkErrorCounter");
  sym(fabric_info, "nvmlDeviceGetGpuFabricInfo");
  sym(compute_processes, "nvmlDeviceGetComputeRunningProcesses_v3");
  sym(event_set_create, "nvmlEventSetCreate");
  sym(register_events, "nvmlDeviceRegisterEvents");
  sym(event_set_wait, "nvmlEventSetWait_v2");
  sym(event_set_free, "nvmlEventSetFree");
}

namespace {

std::mutex g_health_mutex;  // NVML is thread-safe; one probe at a time keeps init/shutdown paired

constexpr int kEccCorrected = 0, kEccUncorrected = 1;  // nvmlMemoryErrorType_t
constexpr int kVolatile = 0, kAggregate = 1;           // nvmlEccCounterType_t
constexpr int kTemperatureGpu = 0;                     // NVML_TEMPERATURE_GPU
constexpr int kThresholdShutdown = 0, kThresholdSlowdown = 1;
// nvmlNvLinkErrorCounter_t
constexpr int kNvlinkReplay = 0, kNvlinkRecovery = 1, kNvlinkCrcFlit = 2, kNvlinkCrcData = 3;

// Reads one unsigned fact into `out` (left at -1 when the call fails).
template <class Fn, class Out>
void read_unsigned(Fn fn, nvml::Device dev, Out& out) {
  unsigned value = 0;
  if (fn && fn(dev, &value) == nvml::kSuccess) out = static_cast<Out>(value);
}

void read_errors(const nvml::HealthApi& api, nvml::Device dev, nubo_cuda_gpu_health& g) {
  int current = 0, pending = 0;
  if (api.ecc_mode && api.ecc_mode(dev, &current, &pending) == nvml::kSuccess)
    g.ecc_enabled = current ? 1 : 0;
  auto count = [&](int type, int counter, int64_t& out) {
    unsigned long long n = 0;
    if (api.total_ecc_errors && api.total_ecc_errors(dev, type, counter, &n) == nvml::kSuccess)
      out = static_cast<int64_t>(n);
  };
  count(kEccCorrected, kVolatile, g.ecc_sbe_volatile);
  count(kEccUncorrected, kVolatile, g.ecc_dbe_volatile);
  count(kEccCorrected, kAggregate, g.ecc_sbe_aggregate);
  count(kEccUncorrected, kAggregate, g.ecc_dbe_aggregate);
  int retired = 0;
  if (api.retired_pages_pending && api.retired_pages_pending(dev, &retired) == nvml::kSuccess)
    g.retired_pages_pending = retired ? 1 : 0;
  unsigned corr = 0, unc = 0, pend = 0, failed = 0;
  if (api.remapped_rows && api.remapped_rows(dev, &corr, &unc, &pend, &failed) == nvml::kSuccess) {
    g.remap_correctable = static_cast<int32_t>(corr);
    g.remap_uncorrectable = static_cast<int32_t>(unc);
    g.remap_pending = pend ? 1 : 0;
    g.remap_failed = failed ? 1 : 0;
  }
}

void read_clocks(const nvml::HealthApi& api, nvml::Device dev, nubo_cuda_gpu_health& g) {
  unsigned long long reasons = 0;
  if (api.clocks_event_reasons && api.clocks_event_reasons(dev, &reasons) == nvml::kSuccess) {
    g.clock_event_reasons = reasons;
    g.clock_event_reasons_known = 1;
  }
  unsigned value = 0;
  if (api.temperature && api.temperature(dev, kTemperatureGpu, &value) == nvml::kSuccess)
    g.temperature_c = static_cast<int32_t>(value);
  if (api.temperature_threshold &&
      api.temperature_threshold(dev, kThresholdSlowdown, &value) == nvml::kSuccess)
    g.temperature_slowdown_c = static_cast<int32_t>(value);
  if (api.temperature_threshold &&
      api.temperature_threshold(dev, kThresholdShutdown, &value) == nvml::kSuccess)
    g.temperature_shutdown_c = static_cast<int32_t>(value);
  read_unsigned(api.power_usage, dev, g.power_mw);
  read_unsigned(api.enforced_power_limit, dev, g.power_limit_mw);
}

void read_links(const nvml::HealthApi& api, nvml::Device dev, nubo_cuda_gpu_health& g) {
  read_unsigned(api.pcie_gen, dev, g.pcie_gen);
  read_unsigned(api.pcie_width, dev, g.pcie_width);
  read_unsigned(api.pcie_gen_max, dev, g.pcie_gen_max);
  read_unsigned(api.pcie_width_max, dev, g.pcie_width_max);
  read_unsigned(api.pcie_replays, dev, g.pcie_replays);
  for (unsigned link = 0; link < NUBO_CUDA_MAX_NVLINKS && api.nvlink_state; ++link) {
    int active = 0;
    if (api.nvlink_state(dev, link, &active) != nvml::kSuccess) continue;  // no such link
    auto& l = g.nvlinks[link];
    l.state = active == nvml::kEnableStateEnabled ? 1 : 0;
    auto counter = [&](int which, int64_t& out) {
      unsigned long long n = 0;
      if (api.nvlink_error_counter &&
          api.nvlink_error_counter(dev, link, which, &n) == nvml::kSuccess)
        out = static_cast<int64_t>(n);
    };
    counter(kNvlinkReplay, l.replay);
    counter(kNvlinkRecovery, l.recovery);
    counter(kNvlinkCrcFlit, l.crc_flit);
    counter(kNvlinkCrcData, l.crc_data);
  }
  nvml::FabricInfo fabric{};
  if (api.fabric_info && api.fabric_info(dev, &fabric) == nvml::kSuccess) {
    g.fabric_state = fabric.state;
    g.fabric_status = fabric.status;
  }
}

void read_use(const nvml::Api& base, const nvml::HealthApi& api, nvml::Device dev,
              nubo_cuda_gpu_health& g) {
  int mode = 0;
  if (api.persistence_mode && api.persistence_mode(dev, &mode) == nvml::kSuccess)
    g.persistence_mode = mode ? 1 : 0;
  unsigned current = 0, pending = 0;
  if (base.device_get_mig_mode &&
      base.device_get_mig_mode(dev, &current, &pending) == nvml::kSuccess)
    g.mig_mode = current ? 1 : 0;
  if (!api.compute_processes) return;
  nvml::ProcessInfo infos[NUBO_CUDA_MAX_PROCESSES] = {};
  unsigned count = NUBO_CUDA_MAX_PROCESSES;
  const nvml::Return r = api.compute_processes(dev, &count, infos);
  constexpr nvml::Return kInsufficientSize = 7;
  if (r != nvml::kSuccess && r != kInsufficientSize) return;
  g.processes_known = 1;
  g.process_count = static_cast<int32_t>(count);
  const unsigned listed = count < NUBO_CUDA_MAX_PROCESSES ? count : NUBO_CUDA_MAX_PROCESSES;
  for (unsigned i = 0; i < listed && r == nvml::kSuccess; ++i) {
    g.processes[i].pid = infos[i].pid;
    // NVML_VALUE_NOT_AVAILABLE (all ones) when the driver does not say (e.g. in a container).
    g.processes[i].used_memory =
        infos[i].used_gpu_memory == ~0ull ? 0 : static_cast<uint64_t>(infos[i].used_gpu_memory);
  }
}

void set_unknowns(nubo_cuda_gpu_health& g) {
  g.ecc_enabled = g.retired_pages_pending = -1;
  g.ecc_sbe_volatile = g.ecc_dbe_volatile = g.ecc_sbe_aggregate = g.ecc_dbe_aggregate = -1;
  g.remap_correctable = g.remap_uncorrectable = g.remap_pending = g.remap_failed = -1;
  g.temperature_c = g.temperature_slowdown_c = g.temperature_shutdown_c = -1;
  g.power_mw = g.power_limit_mw = -1;
  g.pcie_gen = g.pcie_width = g.pcie_gen_max = g.pcie_width_max = -1;
  g.pcie_replays = -1;
  g.persistence_mode = g.mig_mode = g.fabric_state = g.fabric_status = -1;
  for (auto& l : g.nvlinks) {
    l.state = -1;
    l.replay = l.recovery = l.crc_flit = l.crc_data = -1;
  }
}

int index_of(const nvml::Device* handles, int listed, nvml::Device dev) {
  for (int i = 0; i < listed; ++i)
    if (handles[i] == dev) return i;
  return -1;
}

// Waits up to wait_ms for critical XID events on every listed GPU.
void watch_xids(const nvml::HealthApi& api, const nvml::Device* handles, nubo_cuda_health& h) {
  if (!api.event_set_create || !api.register_events || !api.event_set_wait || !api.event_set_free)
    return;
  nvml::EventSet set = nullptr;
  if (api.event_set_create(&set) != nvml::kSuccess) return;
  for (int i = 0; i < h.gpus_listed; ++i)
    if (handles[i] &&
        api.register_events(handles[i], nvml::kEventXidCriticalError, set) == nvml::kSuccess)
      h.events_supported = 1;
  const auto start = std::chrono::steady_clock::now();
  const long long wait_ms = h.wait_ms > 0 ? h.wait_ms : 0;
  // Events already queued come back at once; a flood is counted, not listed, and bounded.
  for (int seen = 0; h.events_supported && seen < 16 * NUBO_CUDA_MAX_XIDS; ++seen) {
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - start)
                             .count();
    const auto timeout = static_cast<unsigned>(elapsed >= wait_ms ? 0 : wait_ms - elapsed);
    nvml::EventData data{};
    if (api.event_set_wait(set, &data, timeout) != nvml::kSuccess)
      break;  // NVML_ERROR_TIMEOUT: nothing (more) came
    if (h.xid_count < NUBO_CUDA_MAX_XIDS) {
      auto& e = h.xids[h.xid_count];
      e.gpu = index_of(handles, h.gpus_listed, data.device);
      e.xid = static_cast<int32_t>(data.event_data);
      e.timestamp_us =
          static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count());
    }
    ++h.xid_count;
  }
  api.event_set_free(set);
}

void probe_health(nubo_cuda_health& h) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    copy_text(h.nvml_error, why ? why : "libnvidia-ml.so.1: cannot be loaded");
    return;
  }
  h.nvml_loaded = 1;
  const nvml::Api base(lib);
  if (const char* missing = base.missing_required()) {
    std::snprintf(h.nvml_error, sizeof h.nvml_error, "libnvidia-ml.so.1 does not export %s",
                  missing);
    return;
  }
  h.nvml_init_result = base.init();
  if (h.nvml_init_result != nvml::kSuccess) {
    const char* text = base.error_string ? base.error_string(h.nvml_init_result) : nullptr;
    std::snprintf(h.nvml_error, sizeof h.nvml_error, "nvmlInit_v2 failed: %s (NVML error %d)",
                  text ? text : "unknown error", h.nvml_init_result);
    return;
  }
  const nvml::HealthApi api(lib);
  unsigned count = 0;
  if (base.device_get_count(&count) == nvml::kSuccess) {
    h.gpu_count = static_cast<int32_t>(count < (1u << 20) ? count : (1u << 20));
    h.gpus_listed = h.gpu_count < NUBO_CUDA_MAX_DEVICES ? h.gpu_count : NUBO_CUDA_MAX_DEVICES;
  }
  nvml::Device handles[NUBO_CUDA_MAX_DEVICES] = {};
  for (int i = 0; i < h.gpus_listed; ++i) {
    auto& g = h.gpus[i];
    set_unknowns(g);
    if (base.device_get_handle_by_index(static_cast<unsigned>(i), &handles[i]) != nvml::kSuccess) {
      handles[i] = nullptr;
      continue;
    }
    char text[nvml::kUuidSize] = {};
    if (base.device_get_uuid && base.device_get_uuid(handles[i], text, nvml::kUuidSize) == 0) {
      terminate_text(text);
      copy_text(g.uuid, text);
    }
    nvml::PciInfo pci{};
    if (base.device_get_pci_info && base.device_get_pci_info(handles[i], &pci) == 0)
      format_bus_id(g.pci_bus_id, pci.domain, pci.bus, pci.device);
    read_errors(api, handles[i], g);
    read_clocks(api, handles[i], g);
    read_links(api, handles[i], g);
    read_use(base, api, handles[i], g);
  }
  watch_xids(api, handles, h);
  base.shutdown();
}

}  // namespace
}  // namespace nubo::cuda_plugin

extern "C" __attribute__((visibility("default"))) int nubo_cuda_plugin_health(
    nubo_cuda_health* out) noexcept {
  using namespace nubo::cuda_plugin;
  constexpr std::size_t header = offsetof(nubo_cuda_health, nvml_loaded);
  if (!out || out->struct_size < header) return NUBO_CUDA_PLUGIN_BAD_ARGUMENT;
  if (out->abi_version != NUBO_CUDA_HEALTH_ABI_VERSION) {
    out->abi_version = NUBO_CUDA_HEALTH_ABI_VERSION;
    return NUBO_CUDA_PLUGIN_ABI_MISMATCH;
  }
  try {
    std::unique_ptr<nubo_cuda_health> h(new (std::nothrow) nubo_cuda_health{});
    if (!h) return NUBO_CUDA_PLUGIN_INTERNAL;
    h->wait_ms = out->wait_ms;
    h->nvml_init_result = -1;
    {
      const std::lock_guard<std::mutex> lock(g_health_mutex);
      probe_health(*h);
    }
    const std::size_t size = out->struct_size < sizeof *h ? out->struct_size : sizeof *h;
    h->struct_size = static_cast<uint32_t>(size);
    h->abi_version = NUBO_CUDA_HEALTH_ABI_VERSION;
    std::memcpy(static_cast<void*>(out), h.get(), size);
    return NUBO_CUDA_PLUGIN_OK;
  } catch (...) {
    return NUBO_CUDA_PLUGIN_INTERNAL;
  }
}
