// The host backend: the CPU as a device. Device memory is host memory (256-byte aligned),
// GEMM is OpenBLAS cblas_sgemm, and the built-in kernels are loops over kernels/math.hpp. Every
// call runs to completion in the calling thread, so events are complete once recorded.
// The sim backend (sim_backend.hpp) is this with a memory limit and pointer checks.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "device/backend.hpp"

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

  void copy_to_device(void* dst, const void* host_src, std::size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes) override;
  void copy_on_device(void* dst, const void* src, std::size_t bytes) override;
  void synchronize() override {}

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

 protected:
  // Called with every device-memory range an operation touches. The host accepts any host
  // pointer (so callers may hand it their own arrays); sim insists on its own allocations.
  virtual void check_range(const void* ptr, std::size_t bytes, const char* what) const;
  // True when [ptr, ptr + bytes) lies inside one live allocation of this backend.
  bool owns(const void* ptr, std::size_t bytes) const;

 private:
  Device device_;
  std::size_t limit_;
  std::atomic<std::size_t> in_use_{0};
  mutable std::mutex mutex_;
  std::map<const char*, std::size_t> allocations_;  // start -> requested bytes
};

}  // namespace nubo::detail
