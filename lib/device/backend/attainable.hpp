// What a healthy device should reach, as opposed to its datasheet peak: the figures the
// preflight compares its measurements with, and the rates simulated devices run at. A
// datasheet figure is never reached in practice (a large cuBLAS GEMM reaches 70-90% of the
// tensor peak, a device-to-device copy 80-90% of the memory bandwidth, a pinned PCIe copy
// about 80-85% of the link's rate), so each figure is the datasheet's times an attainable
// fraction, one per kind of work, kept in this one table (attainable.cpp, with its sources)
// and checked against real GPUs by benchmarks/gpu_check.sh.
#pragma once

#include "device/backend/gpu_catalog.hpp"
#include "nubo/device.hpp"
#include "nubo/dtype.hpp"

namespace nubo::detail {

// The attainable fractions of the datasheet (attainable.cpp says where they come from).
constexpr double kGemmFraction = 0.75;
constexpr double kMemoryFraction = 0.8;
constexpr double kPcieFraction = 0.8;
constexpr double kNvlinkFraction = 0.8;

// Dense GEMM in TFLOP/s for f32, tf32, f16 or bf16; 0 when the model has no such rate.
double attainable_gemm_tflops(const PeakRates& peak, DType type);
// Device-to-device copy in GB/s, counting the bytes read and written (as bandwidthTest does).
double attainable_memory_gbs(double datasheet_gbs);
// Pinned host-to-device or device-to-host copy over PCIe of that generation and width, in GB/s.
double attainable_pcie_gbs(int generation, int width);
// One direction of a GPU-to-GPU copy over `link`, given both GPUs' PCIe links (generation,
// width) and the NVLink rate of the pair's model (total bidirectional GB/s of all its links,
// as the model table gives it).
double attainable_peer_gbs(const Link& link, const GpuModel& model, double pcie_a_gbs,
                           double pcie_b_gbs);
// The datasheet rate of a PCIe link (one direction) in GB/s: the rate per lane times lanes.
double pcie_link_gbs(int generation, int width);

}  // namespace nubo::detail
