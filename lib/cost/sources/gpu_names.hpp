// The GPU model table's key for an accelerator as a price list names it ("A100-80GB", "H100",
// "RTX4090", "NVIDIA L40S"): one alias table (gpu_aliases.csv) serves every source, with the
// memory the source states to tell variants apart and to catch a row that contradicts the table.
#pragma once

#include <string>
#include <string_view>

#include "device/backend/gpu_catalog.hpp"

namespace nubo::cost::sources {

struct GpuMatch {
  const nubo::detail::GpuModel* model = nullptr;  // nullptr: not usable, see `problem`
  std::string problem;  // "unknown GPU 'MI300X'", "GPU memory 80 GiB disagrees with ..."
};

// `memory_gib` is the per-GPU memory the source states (0: not stated); `hint` the instance's
// name and whatever else the source says of the GPU, which some aliases read ("pcie" in it picks
// the PCIe H100).
GpuMatch match_gpu(std::string_view name, double memory_gib, std::string_view hint);

}  // namespace nubo::cost::sources
