// The GPU model table (lib/device/gpu_models.csv, embedded at build time): peak rates, memory,
// links and form factor per model, with the source of every figure. Discovery fills in what a
// device does not report from here; simulated devices take all their properties from here; the
// cost model prices work with it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nubo/device.hpp"
#include "nubo/dtype.hpp"

namespace nubo::detail {

struct GpuModel {
  std::string model;      // nubo's key, e.g. "A100-SXM4-80GB"
  std::string cuda_name;  // what the driver reports, e.g. "NVIDIA A100-SXM4-80GB"
  std::string architecture;
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  int boost_mhz = 0;
  std::uint64_t memory_bytes = 0;
  double memory_gbs = 0;
  PeakRates peak;
  bool sxm = false;
  int nvlink_links = 0;
  double nvlink_gbs = 0;  // total bidirectional, all links
  bool nvswitch = false;
  int pcie_gen = 0;
  int tdp_w = 0;
};

// A model's dense peak in TFLOP/s for a floating-point type (f32, tf32, f16, bf16); 0 for the
// integer types, which have no peak column.
double peak_rate(const PeakRates& peak, DType type);

class GpuCatalog {
 public:
  // The embedded table, parsed once.
  static const GpuCatalog& builtin();
  // Parses a table in the same CSV format; errors name `source`, the line and the problem.
  static GpuCatalog parse(std::string_view csv_text, const std::string& source);

  const std::vector<GpuModel>& models() const { return models_; }
  // By key, case-insensitively; nullptr when unknown.
  const GpuModel* find(std::string_view model) const;
  // By key; throws Errc::not_found naming the known models when unknown.
  const GpuModel& get(std::string_view model) const;
  // By the name a CUDA device reports; nullptr when no row matches.
  const GpuModel* find_by_device_name(std::string_view cuda_name) const;
  // "T4, V100-SXM2-16GB, ..." for error messages.
  std::string known_models() const;

 private:
  std::vector<GpuModel> models_;
};

}  // namespace nubo::detail
