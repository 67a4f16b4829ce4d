// Reading the facts the CUDA plugin returns (cuda_plugin_abi.h) into nubo's types. The facts
// come from another binary and, through it, from a driver: every count is clamped to the arrays
// and every string is read with a bound, so no value in them can make nubo read out of bounds.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "nubo/device.hpp"
#include "nubo_plugin/cuda_plugin_abi.h"

namespace nubo::detail {

// A fixed-size text field as a string, whether or not it is NUL-terminated.
template <std::size_t N>
std::string fact_text(const char (&field)[N]) {
  return std::string(field, strnlen(field, N));
}

// devices_listed / nvml_devices_listed clamped to [0, NUBO_CUDA_MAX_DEVICES].
int listed_cuda_devices(const nubo_cuda_facts& facts);
int listed_nvml_devices(const nubo_cuda_facts& facts);
// The NVML entry of CUDA device i, or nullptr when there is none (or the index is bad).
const nubo_cuda_nvml_device_facts* nvml_entry(const nubo_cuda_facts& facts, int i);

// "12.4" for 12040; "unknown" for 0 or less.
std::string cuda_version_string(int version);

// NVML's nvmlGpuTopologyLevel_t as nvidia-smi topo -m names it.
LinkKind link_kind_from_nvml_level(int level);

DriverInfo driver_from_facts(const nubo_cuda_facts& facts);
// The CUDA devices in ordinal order (index == ordinal). Model and peak rates are left to the
// GPU model table (discover.cpp).
std::vector<Device> devices_from_facts(const nubo_cuda_facts& facts);
// links[i][j] between the CUDA devices: NV# from NVLink counts (direct, or both ends on
// NVSwitches), else the NVML common ancestor, else unknown; peer access from the driver.
std::vector<std::vector<Link>> links_from_facts(const nubo_cuda_facts& facts);

}  // namespace nubo::detail
