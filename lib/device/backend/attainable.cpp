#include "device/backend/attainable.hpp"

#include <algorithm>

namespace nubo::detail {
namespace {

// Attainable fractions of the datasheet, for large operations on a healthy GPU:
//  - GEMM: cuBLAS on 8192^2 bf16 reaches ~75% of the dense tensor peak on H100/H200 SXM (the
//    peak assumes the boost clock, which a GEMM at full power does not hold) and ~85-90% on
//    A100; fp32 (SIMT) reaches ~75-80%. One fraction, the lower: a healthy A100 scores above 1.
//  - Device memory: cudaMemcpy device-to-device reaches ~80-90% of HBM bandwidth
//    (bandwidthTest; NVIDIA's STREAM-like figures for A100 and H100).
//  - PCIe: pinned cudaMemcpy reaches ~80-85% of the link's rate after encoding and packet
//    overheads (bandwidthTest: ~26 GB/s on Gen4 x16, ~53 GB/s on Gen5 x16).
//  - NVLink: a peer copy reaches ~80% of one direction's rate (p2pBandwidthLatencyTest).
// benchmarks/gpu_check.sh prints the measured figure beside each of these on a real GPU.
// (The constants are in attainable.hpp.)

// A peer copy that crosses more of the PCIe tree loses more: through the host bridge, across
// NUMA nodes within a socket, and across sockets (the CPU's fabric carries it).
double pcie_path_fraction(LinkKind kind) {
  switch (kind) {
    case LinkKind::pix:
    case LinkKind::pxb:
      return 1.0;
    case LinkKind::phb:
      return 0.8;
    case LinkKind::node:
      return 0.7;
    case LinkKind::sys:
      return 0.5;
    default:
      return 0.5;
  }
}

}  // namespace

double attainable_gemm_tflops(const PeakRates& peak, DType type) {
  return peak_rate(peak, type) * kGemmFraction;
}

double attainable_memory_gbs(double datasheet_gbs) {
  return datasheet_gbs * kMemoryFraction;
}

double pcie_link_gbs(int generation, int width) {
  // GB/s per lane and direction after line encoding: 8b/10b for Gen1-2, 128b/130b from Gen3
  // (Gen6 uses FLIT mode, about the same efficiency).
  static constexpr double kPerLane[] = {0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.877, 15.754};
  if (generation < 1 || generation > 7 || width < 1) return 0;
  return kPerLane[generation] * width;
}

double attainable_pcie_gbs(int generation, int width) {
  return pcie_link_gbs(generation, width) * kPcieFraction;
}

double attainable_peer_gbs(const Link& link, const GpuModel& model, double pcie_a_gbs,
                           double pcie_b_gbs) {
  if (link.kind == LinkKind::nvlink && model.nvlink_links > 0) {
    // The pair's share of the GPU's links: all of them through NVSwitch, else those joining it.
    const int links = model.nvswitch ? model.nvlink_links : std::max(link.nvlinks, 1);
    const double one_direction = model.nvlink_gbs / 2 * links / model.nvlink_links;
    return one_direction * kNvlinkFraction;
  }
  return std::min(pcie_a_gbs, pcie_b_gbs) * pcie_path_fraction(link.kind);
}

}  // namespace nubo::detail
