#include "cost/efficiency.hpp"

#include <string_view>

namespace nubo::cost::detail {
namespace {

struct Calibration {
  std::string_view architecture;
  double most;  // m: the fraction a very large model reaches
  double half;  // h½: the hidden size that reaches half of it
  const char* basis;
};

// Fitted to published whole-run GPU-hours (FLOPs = 6·N·D over hours × peak), which include
// what a real run spends besides its steps (restarts, checkpoints, evaluation); the runs, their
// sources and nubo's figure for each are benchmarks/cost/validation_runs.csv and
// benchmarks/results/cost_validation.md.
//   Ampere: nearly flat, 38-48% from 7B to 180B (Llama 2, LLaMA, Falcon, OPT, BLOOM on A100).
//   Hopper: rising with size, from 14-16% for 8B (Llama 3 and 3.1) through 20-38% in between
//           (DeepSeek on H800, Llama 70B) to 35% for 405B (Llama 3.1): a small model leaves a
//           faster GPU idle more of the time.
// Other architectures have no published run to fit: Blackwell takes Hopper's (as fast or faster,
// so at least as hard to keep busy), the rest Ampere's; their notes say so.
constexpr Calibration kAmpere{"Ampere", 0.45, 400, "calibrated on published Ampere runs"};
constexpr Calibration kHopper{"Hopper", 0.60, 11000, "calibrated on published Hopper runs"};

const Calibration& calibration_of(const nubo::detail::GpuModel& gpu, bool* fitted) {
  const bool hopper_like = gpu.architecture == "Hopper" || gpu.architecture == "Blackwell";
  if (fitted)
    *fitted = gpu.architecture == kAmpere.architecture || gpu.architecture == kHopper.architecture;
  return hopper_like ? kHopper : kAmpere;
}

}  // namespace

double model_flops_utilisation(const nubo::detail::GpuModel& gpu, double hidden) {
  const auto& c = calibration_of(gpu, nullptr);
  return hidden > 0 ? c.most * hidden / (hidden + c.half) : c.most;
}

std::string efficiency_basis(const nubo::detail::GpuModel& gpu) {
  bool fitted = false;
  const auto& c = calibration_of(gpu, &fitted);
  if (fitted) return c.basis;
  return std::string(c.basis) + ", as no published " + gpu.architecture + " run is";
}

}  // namespace nubo::cost::detail
