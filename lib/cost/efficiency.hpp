// What fraction of a GPU's dense peak training a transformer achieves (model FLOPs utilisation,
// MFU), when the workload does not pin it: a function of the GPU's architecture and the model's
// hidden size, calibrated on published whole-run GPU-hours (docs/cost.md, "Efficiency";
// benchmarks/results/cost_validation.md checks it against more runs).
#pragma once

#include <string>

#include "device/backend/gpu_catalog.hpp"

namespace nubo::cost::detail {

// MFU = m · h / (h + h½): small models reach less of the peak, and the faster the GPU the larger
// the matrices it needs to be kept busy (h½ grows with the architecture's peak).
double model_flops_utilisation(const nubo::detail::GpuModel& gpu, double hidden);

// Which calibration applies, for an estimate's note: "calibrated on published Ampere runs".
std::string efficiency_basis(const nubo::detail::GpuModel& gpu);

}  // namespace nubo::cost::detail
