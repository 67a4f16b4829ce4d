#include "device/cuda/cuda_facts.hpp"

#include <algorithm>

namespace nubo::detail {

int listed_cuda_devices(const nubo_cuda_facts& f) {
  return std::clamp(static_cast<int>(f.devices_listed), 0, NUBO_CUDA_MAX_DEVICES);
}

int listed_nvml_devices(const nubo_cuda_facts& f) {
  return std::clamp(static_cast<int>(f.nvml_devices_listed), 0, NUBO_CUDA_MAX_DEVICES);
}

const nubo_cuda_nvml_device_facts* nvml_entry(const nubo_cuda_facts& f, int i) {
  if (i < 0 || i >= listed_cuda_devices(f)) return nullptr;
  const int k = f.devices[i].nvml_index;
  if (k < 0 || k >= listed_nvml_devices(f)) return nullptr;
  return &f.nvml_devices[k];
}

std::string cuda_version_string(int version) {
  if (version <= 0) return "unknown";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

LinkKind link_kind_from_nvml_level(int level) {
  switch (level) {
    case 0:   // NVML_TOPOLOGY_INTERNAL: two GPUs on one board, behind one switch
    case 10:  // NVML_TOPOLOGY_SINGLE
      return LinkKind::pix;
    case 20:
      return LinkKind::pxb;  // NVML_TOPOLOGY_MULTIPLE
    case 30:
      return LinkKind::phb;  // NVML_TOPOLOGY_HOSTBRIDGE
    case 40:
      return LinkKind::node;  // NVML_TOPOLOGY_NODE
    case 50:
      return LinkKind::sys;  // NVML_TOPOLOGY_SYSTEM
    default:
      return LinkKind::unknown;
  }
}

DriverInfo driver_from_facts(const nubo_cuda_facts& f) {
  DriverInfo d;
  d.loaded = f.driver_loaded != 0;
  d.driver_version = std::max(0, static_cast<int>(f.driver_version));
  d.runtime_version = std::max(0, static_cast<int>(f.runtime_version));
  d.driver_release = fact_text(f.driver_release);
  return d;
}

namespace {

// Peak bandwidth from the memory clock (kHz) and bus width (bits): two transfers per clock.
double bandwidth_gbs(int memory_clock_khz, int bus_width_bits) {
  if (memory_clock_khz <= 0 || bus_width_bits <= 0) return 0;
  return 2.0 * memory_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9;
}

int nvlink_count(const nubo_cuda_facts& f, int a, int b) {
  if (a < 0 || b < 0 || a == b || a >= listed_nvml_devices(f) || b >= listed_nvml_devices(f))
    return 0;
  // NVML has at most 18 links per GPU today; the clamp keeps absurd counts from overflowing.
  const int direct = std::clamp(static_cast<int>(f.nvlinks[a][b]), 0, 64);
  // On NVSwitch systems every GPU reaches every other through the switches with all its links;
  // nvidia-smi shows that as NV<links>, and so does nubo.
  const int via_switch = std::clamp(
      std::min<int>(f.nvml_devices[a].nvswitch_links, f.nvml_devices[b].nvswitch_links), 0, 64);
  return std::min(direct + via_switch, 64);
}

}  // namespace

std::vector<Device> devices_from_facts(const nubo_cuda_facts& f) {
  std::vector<Device> out;
  const int n = listed_cuda_devices(f);
  for (int i = 0; i < n; ++i) {
    const auto& c = f.devices[i];
    Device d;
    d.backend = Backend::cuda;
    d.index = d.ordinal = i;
    d.name = fact_text(c.name);
    d.uuid = fact_text(c.uuid);
    d.pci_bus_id = fact_text(c.pci_bus_id);
    d.cc_major = std::max(0, static_cast<int>(c.cc_major));
    d.cc_minor = std::max(0, static_cast<int>(c.cc_minor));
    d.multiprocessors = std::max(0, static_cast<int>(c.multiprocessors));
    d.clock_mhz = std::max(0, static_cast<int>(c.clock_khz)) / 1000;
    d.memory_total = c.memory_total;
    d.memory_bandwidth_gbs = bandwidth_gbs(c.memory_clock_khz, c.memory_bus_width_bits);
    d.numa_node = std::max(-1, static_cast<int>(c.numa_node));
    if (const auto* nv = nvml_entry(f, i)) {
      if (nv->has_memory) d.memory_free = std::min(nv->memory_free, d.memory_total);
      d.mig_enabled = nv->mig_mode == 1;
      if (d.numa_node < 0) d.numa_node = std::max(-1, static_cast<int>(nv->numa_node));
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<std::vector<Link>> links_from_facts(const nubo_cuda_facts& f) {
  const int n = listed_cuda_devices(f);
  std::vector<std::vector<Link>> links(n, std::vector<Link>(n));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      Link& l = links[i][j];
      if (i == j) {
        l.kind = LinkKind::self;
        l.peer_access = true;
        continue;
      }
      l.peer_access = f.peer_access[i][j] == 1;
      const int a = f.devices[i].nvml_index, b = f.devices[j].nvml_index;
      if (const int count = nvlink_count(f, a, b); count > 0) {
        l.kind = LinkKind::nvlink;
        l.nvlinks = count;
      } else if (a >= 0 && b >= 0 && a < listed_nvml_devices(f) && b < listed_nvml_devices(f)) {
        l.kind = link_kind_from_nvml_level(f.topology_level[a][b]);
      }
    }
  }
  return links;
}

}  // namespace nubo::detail
