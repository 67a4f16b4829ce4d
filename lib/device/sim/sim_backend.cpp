#include "device/sim/sim_backend.hpp"

#include "device/backend/attainable.hpp"
#include "device/backend/gpu_catalog.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {

SimBackend::SimBackend(Device device)
    : HostBackend(device, static_cast<std::size_t>(device.memory_total)),
      profile_(sim_profile(device)) {
  const GpuModel* model = GpuCatalog::builtin().find(device.model);
  peak_ = model ? model->peak : device.peak;
  memory_gbs_ = attainable_memory_gbs(device.memory_bandwidth_gbs) * profile_.membw;
  const int generation = profile_.pcie_gen ? profile_.pcie_gen : (model ? model->pcie_gen : 4);
  pcie_gbs_ = attainable_pcie_gbs(generation, profile_.pcie_width);
}

std::string SimBackend::describe() const {
  const Device& d = device();
  return "sim " + std::to_string(d.index) + " (" + (d.model.empty() ? d.name : d.model) + ")";
}

void SimBackend::check_range(const void* ptr, std::size_t bytes, const char* what) const {
  if (bytes == 0) return;  // an empty operand touches nothing
  if (!ptr) throw Error(Errc::invalid_argument, describe() + ": " + what + " is a null pointer");
  if (!owns(ptr, bytes))
    throw Error(Errc::invalid_argument,
                describe() + ": " + what + " (" + std::to_string(bytes) +
                    " bytes) is not inside memory allocated on this device: a buffer of another "
                    "device, a host array, a freed buffer or an overrun");
}

void SimBackend::advance(double seconds) {
  double now = modelled_.load();
  while (!modelled_.compare_exchange_weak(now, now + seconds)) {
  }
}

namespace {
double seconds_at(double amount, double rate) {
  return rate > 0 ? amount / rate : 0;
}
}  // namespace

void SimBackend::copy_to_device(void* dst, const void* host_src, std::size_t bytes) {
  HostBackend::copy_to_device(dst, host_src, bytes);
  advance(seconds_at(static_cast<double>(bytes), pcie_gbs_ * 1e9));
}

void SimBackend::copy_to_host(void* host_dst, const void* src, std::size_t bytes) {
  HostBackend::copy_to_host(host_dst, src, bytes);
  advance(seconds_at(static_cast<double>(bytes), pcie_gbs_ * 1e9));
}

void SimBackend::copy_on_device(void* dst, const void* src, std::size_t bytes) {
  HostBackend::copy_on_device(dst, src, bytes);
  advance(seconds_at(2.0 * static_cast<double>(bytes), memory_gbs_ * 1e9));  // read + write
}

void SimBackend::gemm(const GemmPlan& p, DType type, const void* a, const void* b, void* c) {
  HostBackend::gemm(p, type, a, b, c);
  const double flops =
      2.0 * static_cast<double>(p.g.m) * static_cast<double>(p.g.n) * static_cast<double>(p.g.k);
  advance(seconds_at(flops, attainable_gemm_tflops(peak_, type) * profile_.gemm * 1e12));
}

}  // namespace nubo::detail
