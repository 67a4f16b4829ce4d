// The cuda backend: a DeviceBackend over the CUDA plugin's backend table (one GPU, its own CUDA
// stream and cuBLAS handle). libnubo never links CUDA; every call goes through the table, and
// every failure the plugin reports becomes a nubo::Error (cuda_backend_errors.hpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>

#include "device/backend/backend.hpp"
#include "nubo_plugin/cuda_plugin_abi.h"

// True when the plugin's backend table holds `field` and sets it: functions are appended to the
// table over time, so an older plugin's table ends before them (cuda_plugin_abi.h).
#define NUBO_CUDA_TABLE_HAS(api, field)                                                 \
  ((api)->struct_size >= offsetof(nubo_cuda_backend_api, field) + sizeof(api)->field && \
   (api)->field != nullptr)

namespace nubo::detail {

class CudaBackend final : public DeviceBackend {
 public:
  // Opens the device through the plugin; throws unavailable with the machine's diagnosis (no
  // driver, no such device...) when it cannot.
  static std::unique_ptr<CudaBackend> open(const Device& device);

  // Takes ownership of `handle`, made by api->create. Public so tests can drive a fake table.
  CudaBackend(Device device, const nubo_cuda_backend_api* api, nubo_cuda_backend* handle);
  ~CudaBackend() override;

  const Device& device() const override { return device_; }
  std::string describe() const override;
  bool host_accessible() const override { return false; }

  void* allocate(std::size_t bytes) override;
  void free(void* ptr) override;
  std::size_t bytes_in_use() const override { return in_use_.load(); }
  std::size_t memory_limit() const override;
  void adopt(const void* ptr, std::size_t bytes) override;
  void forget(const void*, std::size_t) noexcept override {}

  void copy_to_device(void* dst, const void* host_src, std::size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes) override;
  void copy_on_device(void* dst, const void* src, std::size_t bytes) override;
  void copy_from_peer(void* dst, const DeviceBackend& peer, const void* src,
                      std::size_t bytes) override;
  void* allocate_host(std::size_t bytes) override;
  void free_host(void* ptr) noexcept override;
  void synchronize() override;

  NativeHandles native() const override;
  void use_stream(void* stream) override;
  void use_own_stream() override;
  std::unique_ptr<DeviceEvent> create_event() override;
  void record(DeviceEvent& event) override;
  void wait(DeviceEvent& event) override;
  void wait_native(void* cuda_event) override;

  using DeviceBackend::gemm;
  void gemm(const GemmPlan& p, DType type, const void* a, const void* b, void* c) override;

  void fill(void* x, std::size_t n, std::size_t elem_bytes, std::uint64_t pattern) override;
  void scale(DType type, void* x, std::size_t n, float alpha) override;
  void axpy(DType type, std::size_t n, float alpha, const void* x, void* y) override;
  void cast(DType from, const void* src, DType to, void* dst, std::size_t n) override;
  void unscale_check(DType type, void* x, std::size_t n, float inv_scale, float* stats) override;
  void optimizer_step(const math::OptimizerStep& step, std::size_t n, float* master,
                      DType grad_type, const void* grad, float* m, float* v, DType param_type,
                      void* param) override;

  // For the NCCL communicator, which runs on this backend's stream.
  const nubo_cuda_backend_api* api() const { return api_; }
  nubo_cuda_backend* handle() const { return handle_; }
  // Throws the Error for a failed plugin call (rc != NUBO_CUDA_CALL_OK).
  void check(int rc, const nubo_cuda_status& status) const;
  // unavailable, naming `what`, when the plugin's table predates cast/unscale_check/optimizer_step.
  void require_optimizer_kernels(const char* what) const;

 private:
  Device device_;
  const nubo_cuda_backend_api* api_;
  nubo_cuda_backend* handle_;
  std::atomic<std::size_t> in_use_{0};
  mutable std::mutex mutex_;
  std::map<void*, std::size_t> allocations_;
};

}  // namespace nubo::detail
