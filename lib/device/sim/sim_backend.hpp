// The sim backend: one simulated GPU (from NUBO_SIM_DEVICES) as a separate device running on
// host threads. It is the host backend plus what makes a device separate:
//  - its own memory accounting, limited to the model's memory (an A100-SXM4-80GB holds 80 GB;
//    beyond that allocate() throws out_of_memory naming the device);
//  - every pointer an operation touches must lie inside one of its own live allocations, so a
//    buffer of another device, a freed buffer or an overrun is an invalid_argument naming the
//    device and the operand, instead of silently working as it would on host memory;
//  - a modelled clock: the time its GEMMs and copies would take on its model at the attainable
//    rates (attainable.hpp), derated by the device's profile (sim_profile.hpp). The work itself
//    runs at the host's speed; only the preflight reads the clock.
// It is a test double for multi-GPU logic; it makes no claim about GPU speed.
#pragma once

#include <atomic>

#include "device/host/host_backend.hpp"
#include "device/sim/sim_profile.hpp"

namespace nubo::detail {

class SimBackend final : public HostBackend {
 public:
  explicit SimBackend(Device device);
  std::string describe() const override;

  void copy_to_device(void* dst, const void* host_src, std::size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes) override;
  void copy_on_device(void* dst, const void* src, std::size_t bytes) override;
  using HostBackend::gemm;
  void gemm(const GemmPlan& p, DType type, const void* a, const void* b, void* c) override;
  std::optional<double> modelled_seconds() const override { return modelled_.load(); }

 protected:
  void check_range(const void* ptr, std::size_t bytes, const char* what) const override;

 private:
  void advance(double seconds);

  SimProfile profile_;
  PeakRates peak_;         // the model's datasheet peaks
  double memory_gbs_ = 0;  // attainable device-to-device GB/s, derated
  double pcie_gbs_ = 0;    // attainable host link GB/s, as trained
  std::atomic<double> modelled_{0};
};

}  // namespace nubo::detail
