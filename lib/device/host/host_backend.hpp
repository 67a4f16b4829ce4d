// The host backend: the CPU as a device. Device memory is host memory (256-byte aligned), GEMM
// is OpenBLAS (host_gemm.hpp: sgemm, and f16/bf16 through sbgemm or f32 conversion), and the
// elementwise kernels are plain loops. Every call runs to completion in the calling thread, so
// events are complete once recorded and there are no streams.
// The sim backend (sim_backend.hpp) is this with a memory limit and pointer checks.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "device/backend/backend.hpp"

namespace nubo::detail {

class HostBackend : public DeviceBackend {
 public:
  // memory_limit 0: no limit of nubo's own (the operating system still has one).
  HostBackend(Device device, std::size_t memory_limit);
  ~HostBackend() override;

  const Device& device() const override { return device_; }
  std::string describe() const override;
  bool host_accessible() const override { return true; }

  void* allocate(std::size_t bytes) override;
  void free(void* ptr) override;
  std::size_t bytes_in_use() const override { return in_use_.load(); }
  std::size_t memory_limit() const override { return limit_; }
  void adopt(const void* ptr, std::size_t bytes) override;
  void forget(const void* ptr, std::size_t bytes) noexcept override;

  void copy_to_device(void* dst, const void* host_src, std::size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes) override;
  void copy_on_device(void* dst, const void* src, std::size_t bytes) override;
  void copy_from_peer(void* dst, const DeviceBackend& peer, const void* src,
                      std::size_t bytes) override;
  void synchronize() override {}

  NativeHandles native() const override { return {}; }
  void use_stream(void* stream) override;
  void use_own_stream() override {}
  std::unique_ptr<DeviceEvent> create_event() override;
  void record(DeviceEvent& event) override;
  void wait(DeviceEvent& event) override;
  void wait_native(void* cuda_event) override;

  using DeviceBackend::gemm;
  void gemm(const GemmPlan& p, DType type, const void* a, const void* b, void* c) override;

  void use_openblas(std::shared_ptr<BlasShare> share, int worker) override {
    blas_ = std::move(share);
    blas_worker_ = worker;
  }
  int host_threads() const override;

  void fill(void* x, std::size_t n, std::size_t elem_bytes, std::uint64_t pattern) override;
  void scale(DType type, void* x, std::size_t n, float alpha) override;
  void axpy(DType type, std::size_t n, float alpha, const void* x, void* y) override;
  // host_optimizer_kernels.cpp
  void cast(DType from, const void* src, DType to, void* dst, std::size_t n) override;
  void unscale_check(DType type, void* x, std::size_t n, float inv_scale, float* stats) override;
  void optimizer_step(const math::OptimizerStep& step, std::size_t n, float* master,
                      DType grad_type, const void* grad, float* m, float* v, DType param_type,
                      void* param) override;

 protected:
  // Called with every device-memory range an operation touches. The host accepts any host
  // pointer (so callers may hand it their own arrays); sim insists on its own allocations.
  virtual void check_range(const void* ptr, std::size_t bytes, const char* what) const;
  // True when [ptr, ptr + bytes) lies inside one live allocation or adopted range.
  bool owns(const void* ptr, std::size_t bytes) const;

 private:
  Device device_;
  std::size_t limit_;
  std::atomic<std::size_t> in_use_{0};
  mutable std::mutex mutex_;
  std::map<const char*, std::size_t> allocations_;   // start -> requested bytes
  std::multimap<const char*, std::size_t> adopted_;  // the application's memory: start -> bytes
  std::shared_ptr<BlasShare> blas_;                  // null: the process's own OpenBLAS
  int blas_worker_ = 0;                              // this device's worker in blas_
};

}  // namespace nubo::detail
