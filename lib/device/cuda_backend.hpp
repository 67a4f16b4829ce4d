// The cuda backend: a DeviceBackend over the CUDA plugin's backend table (one GPU, its own CUDA
// stream and cuBLAS handle). libnubo never links CUDA; every call goes through the table, and
// every failure the plugin reports becomes a nubo::Error (cuda_backend_errors.hpp).
#pragma once

#include <atomic>
#include <map>
#include <mutex>

#include "device/backend.hpp"
#include "device/cuda_plugin_abi.h"

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

  void copy_to_device(void* dst, const void* host_src, std::size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes) override;
  void copy_on_device(void* dst, const void* src, std::size_t bytes) override;
  void synchronize() override;

  std::unique_ptr<DeviceEvent> create_event() override;
  void record(DeviceEvent& event) override;
  void wait(DeviceEvent& event) override;

  void gemm(const Gemm& g, const void* a, const void* b, void* c) override;

  void fill(float* x, std::size_t n, float value) override;
  void scale(float* x, std::size_t n, float alpha) override;
  void axpy(std::size_t n, float alpha, const float* x, float* y) override;
  void bias_add(float* y, const float* bias, std::size_t rows, std::size_t cols) override;
  void bias_grad(const float* dy, float* dbias, std::size_t rows, std::size_t cols) override;
  void relu(const float* x, float* y, std::size_t n) override;
  void relu_grad(const float* x, const float* dy, float* dx, std::size_t n) override;
  void softmax_xent_forward(const float* logits, const std::int32_t* labels, float* probs,
                            float* loss, std::size_t rows, std::size_t cols) override;
  void softmax_xent_backward(const float* probs, const std::int32_t* labels, float* dlogits,
                             std::size_t rows, std::size_t cols, float scale) override;
  void sgd_momentum(float* w, const float* grad, float* velocity, std::size_t n,
                    const SgdParams& p) override;
  void adam(float* w, const float* grad, float* m, float* v, std::size_t n,
            const AdamParams& p) override;

  // For the NCCL communicator, which runs on this backend's stream.
  const nubo_cuda_backend_api* api() const { return api_; }
  nubo_cuda_backend* handle() const { return handle_; }
  // Throws the Error for a failed plugin call (rc != NUBO_CUDA_CALL_OK).
  void check(int rc, const nubo_cuda_status& status) const;

 private:
  Device device_;
  const nubo_cuda_backend_api* api_;
  nubo_cuda_backend* handle_;
  std::atomic<std::size_t> in_use_{0};
  mutable std::mutex mutex_;
  std::map<void*, std::size_t> allocations_;
};

}  // namespace nubo::detail
