// What a worker computes with, besides its buffers: the GEMM description, the native handles
// of its device (the CUDA stream, cuBLAS handle and NCCL communicator an application may use
// for kernels of its own), and events that order work across streams. Worker (parallel.hpp)
// has the calls; docs/parallel.md states the ordering contract.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "nubo/export.hpp"

namespace nubo {

namespace detail {
class DeviceBackend;
class DeviceEvent;
struct EventAccess;
}  // namespace detail

enum class Transpose : bool { no = false, yes = true };

// C = alpha * op(A) * op(B) + beta * C, all matrices row-major (cblas_sgemm with
// CblasRowMajor, NumPy's C order): op(A) is m x k, op(B) is k x n, C is m x n. A leading
// dimension is the distance in elements between the starts of two stored rows:
// lda >= (trans_a ? m : k), ldb >= (trans_b ? k : n), ldc >= n; 0 means packed (the smallest
// legal value). The element type is the buffers' (f32, f16 or bf16, all three the same);
// products are accumulated in f32 whatever the type, and alpha and beta are f32. When
// beta == 0, C is not read (NaNs in it do not propagate).
struct Gemm {
  Transpose trans_a = Transpose::no, trans_b = Transpose::no;
  std::size_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  std::size_t lda = 0, ldb = 0, ldc = 0;
};

// The update rules of Worker::optimizer_step and nubo::ShardedOptimizer, as PyTorch names them:
// SGD with momentum (torch.optim.SGD: v = momentum v + (g + weight_decay w); w -= lr v), Adam
// (torch.optim.Adam: weight decay added to the gradient) and AdamW (torch.optim.AdamW: weight
// decay decoupled, w -= lr weight_decay w first). Values are part of the C ABI.
enum class OptimizerKind : int { sgd = 0, adam = 1, adamw = 2 };

// One update's hyperparameters. Every gradient is multiplied by grad_scale first (gradient
// clipping's coefficient; 1 leaves it exact). step is Adam's t, counted from 1.
struct OptimizerUpdate {
  OptimizerKind kind = OptimizerKind::adamw;
  float lr = 1e-3f;
  float momentum = 0.9f;                            // SGD
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;  // Adam, AdamW
  float weight_decay = 0.0f;
  std::int64_t step = 1;
  float grad_scale = 1.0f;
};

// The native objects behind a worker, for an application that launches work of its own on the
// worker's device. On host and sim workers the pointers are null and device_ordinal is -1.
struct NativeHandles {
  void* cuda_stream = nullptr;    // cudaStream_t the worker queues its work on now
  void* cublas_handle = nullptr;  // cublasHandle_t bound to that stream
  void* nccl_comm = nullptr;      // ncclComm_t of the team (null when the team does not use NCCL)
  int device_ordinal = -1;        // the CUDA device (after CUDA_VISIBLE_DEVICES)
};

// A point in a worker's stream (Worker::record_event): done once all the work the worker had
// queued before it has finished. Another worker, or the application's own stream, can wait for
// it without blocking a thread. Host and sim workers finish each call before returning, so
// their events are done at once.
class NUBO_API Event {
 public:
  Event();
  Event(std::shared_ptr<detail::DeviceBackend> backend, std::shared_ptr<detail::DeviceEvent> event);
  Event(Event&&) noexcept;
  Event& operator=(Event&&) noexcept;
  ~Event();

  bool done() const;         // never blocks; true for an empty (moved-from) event
  void synchronize() const;  // blocks the calling thread until done()
  // The cudaEvent_t on a CUDA worker (for cudaStreamWaitEvent on a stream of yours); null on
  // host and sim workers.
  void* native() const;

 private:
  friend struct detail::EventAccess;
  std::shared_ptr<detail::DeviceBackend> backend_;
  std::shared_ptr<detail::DeviceEvent> event_;
};

}  // namespace nubo
