// Hand-made plugin facts for the unit tests of cuda_facts and cuda_diagnose: a healthy machine
// to start from, which each test then breaks in one way.
#pragma once

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "nubo_plugin/cuda_plugin_abi.h"

namespace nubo::test {

inline void set_text(char* dst, std::size_t size, const std::string& s) {
  std::snprintf(dst, size, "%s", s.c_str());
}
#define NUBO_SET_TEXT(field, value) ::nubo::test::set_text(field, sizeof(field), value)

// A working 13.0 driver and NVML with `gpus` H100s (CUDA ordinal i == NVML index i, bus 0x10*(i+1))
// and nothing else of note: no NVLink, every pair PXB, peer access everywhere.
inline std::unique_ptr<nubo_cuda_facts> healthy_facts(int gpus = 2) {
  auto f = std::make_unique<nubo_cuda_facts>();
  f->struct_size = sizeof(nubo_cuda_facts);
  f->abi_version = NUBO_CUDA_PLUGIN_ABI_VERSION;
  NUBO_SET_TEXT(f->device_order, "PCI_BUS_ID");
  f->runtime_version = 13000;
  f->driver_loaded = 1;
  NUBO_SET_TEXT(f->driver_path, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  f->driver_version = 13000;
  f->init_called = 1;
  f->device_count = f->devices_listed = gpus;
  f->nvml_loaded = 1;
  NUBO_SET_TEXT(f->driver_release, "580.65.06");
  f->nvml_device_count = f->nvml_devices_listed = gpus;
  for (auto& row : f->peer_access)
    for (auto& v : row) v = 1;
  for (auto& row : f->topology_level)
    for (auto& v : row) v = 20;
  for (int i = 0; i < gpus; ++i) {
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "GPU-fa4e0000-0000-0000-0000-0000000000%02x", i);
    char bus[32];
    std::snprintf(bus, sizeof bus, "00000000:%02x:00.0", 0x10 * (i + 1));
    auto& d = f->devices[i];
    NUBO_SET_TEXT(d.name, "NVIDIA H100 80GB HBM3");
    NUBO_SET_TEXT(d.uuid, uuid);
    NUBO_SET_TEXT(d.pci_bus_id, bus);
    d.pci_bus = 0x10 * (i + 1);
    d.cc_major = 9;
    d.multiprocessors = 132;
    d.clock_khz = 1980000;
    d.memory_clock_khz = 2619000;
    d.memory_bus_width_bits = 5120;
    d.memory_total = 85520809984ull;
    d.nvml_index = i;
    d.numa_node = 0;
    auto& n = f->nvml_devices[i];
    NUBO_SET_TEXT(n.name, "NVIDIA H100 80GB HBM3");
    NUBO_SET_TEXT(n.uuid, uuid);
    NUBO_SET_TEXT(n.pci_bus_id, bus);
    n.pci_bus = d.pci_bus;
    n.has_memory = 1;
    n.memory_total = d.memory_total;
    n.memory_free = d.memory_total - (512ull << 20);
    n.mig_mode = 0;
    n.numa_node = 0;
  }
  return f;
}

}  // namespace nubo::test
