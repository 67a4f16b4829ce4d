// The backend interface: everything nubo does on a device goes through one DeviceBackend per
// device. Three implementations: host (the CPU, OpenBLAS), sim (a simulated GPU: host memory
// and host threads, with the model's memory limit) and cuda (the plugin libnubo_cuda.so:
// cudart, cuBLAS). docs/backend.md describes them; kernels/math.hpp holds the arithmetic all
// three share.
//
// Conventions, for every implementation:
//  - Pointers called "device memory" come from allocate() of the same backend. On host and sim
//    they are ordinary host pointers (host_accessible() is true), so host-side code such as the
//    shared-memory communicator may read and write them directly after synchronize().
//  - Work is stream-ordered: calls execute in the order they are made, each after the previous
//    one finished. cuda queues them on the backend's own CUDA stream and returns at once; host
//    and sim run each call to completion before returning (their "stream" is the caller's
//    thread). Code written for the asynchronous case is therefore correct on all three.
//  - A backend is driven by one thread at a time (its worker). bytes_in_use() may be read from
//    any thread.
//  - Sizes are element counts unless the name says bytes. Matrices are row-major, like C
//    arrays and NumPy (see Gemm). The elementwise kernels are fp32; labels are int32.
//  - Errors are nubo::Error: out_of_memory (naming the device, the request and what is in
//    use), invalid_argument (bad sizes, a pointer of another device on sim), unsupported (fp16
//    or bf16 GEMM off CUDA), unavailable (no driver or device), internal (a CUDA failure).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "nubo/device.hpp"
#include "nubo/dtype.hpp"

namespace nubo::detail {

// A point in a backend's stream. Recorded with DeviceBackend::record, it completes when all the
// work submitted before the record has completed.
class DeviceEvent {
 public:
  virtual ~DeviceEvent() = default;
  virtual bool done() = 0;         // non-blocking query; true for an event never recorded
  virtual void synchronize() = 0;  // blocks the calling thread until done()
};

enum class Transpose : bool { no = false, yes = true };

// C = alpha * op(A) * op(B) + beta * C, all matrices row-major (cblas_sgemm with
// CblasRowMajor): op(A) is m x k, op(B) is k x n, C is m x n. A leading dimension is the
// distance in elements between the starts of two rows as stored: lda >= (trans_a ? m : k),
// ldb >= (trans_b ? k : n), ldc >= n; 0 means "packed" (the smallest legal value).
// A, B and C all have the gemm's type; accumulation is fp32 whatever the type, and alpha and
// beta are fp32. When beta == 0, C is not read (NaNs in it do not propagate).
struct Gemm {
  Transpose trans_a = Transpose::no, trans_b = Transpose::no;
  std::size_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  std::size_t lda = 0, ldb = 0, ldc = 0;
  DType type = DType::f32;
};

// SGD with momentum, PyTorch's convention: v = momentum * v + (g + weight_decay * w);
// w -= lr * v. With momentum 0 it is plain SGD (v still holds the last step's gradient).
struct SgdParams {
  float lr = 0.01f, momentum = 0.9f, weight_decay = 0.0f;
};

// Adam (Kingma & Ba), with PyTorch's epsilon placement: m = b1 m + (1 - b1) g;
// v = b2 v + (1 - b2) g^2; w -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
// weight_decay is decoupled (AdamW): w -= lr * weight_decay * w before the step.
// step is t, counted from 1 (t = 0 is an invalid_argument).
struct AdamParams {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f;
  std::int64_t step = 1;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  DeviceBackend() = default;
  DeviceBackend(const DeviceBackend&) = delete;
  DeviceBackend& operator=(const DeviceBackend&) = delete;

  virtual const Device& device() const = 0;
  // "cpu", "sim 2 (A100-SXM4-80GB)", "cuda 0 (NVIDIA H200)": for messages.
  virtual std::string describe() const = 0;
  // True when device memory is host memory (host, sim).
  virtual bool host_accessible() const = 0;

  // --- Memory -----------------------------------------------------------------------------
  // Device memory of at least `bytes` (0 is allowed and gives a unique non-null pointer),
  // aligned to 256 bytes. Throws Errc::out_of_memory naming the device.
  virtual void* allocate(std::size_t bytes) = 0;
  // Frees memory from allocate(); nullptr is ignored. Waits for work using it (cuda syncs).
  // Throws invalid_argument for a pointer this backend did not allocate (host and sim).
  virtual void free(void* ptr) = 0;
  virtual std::size_t bytes_in_use() const = 0;
  // The most this backend may hold: the device's memory (sim: the model's), host: RAM.
  virtual std::size_t memory_limit() const = 0;

  // --- Copies (stream-ordered; host memory must stay valid until the copy has run) --------
  virtual void copy_to_device(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_on_device(void* dst, const void* src, std::size_t bytes) = 0;
  // Blocks until all work submitted so far has completed; rethrows an asynchronous failure.
  virtual void synchronize() = 0;

  // --- Events -------------------------------------------------------------------------------
  virtual std::unique_ptr<DeviceEvent> create_event() = 0;
  virtual void record(DeviceEvent& event) = 0;
  // Later work on this backend waits until `event` completes; the event may come from another
  // backend of the same kind (cuda: another GPU). The calling thread does not block.
  virtual void wait(DeviceEvent& event) = 0;

  // --- GEMM ---------------------------------------------------------------------------------
  virtual void gemm(const Gemm& g, const void* a, const void* b, void* c) = 0;

  // --- Built-in kernels (fp32; in place where x and y may be the same buffer) -------------
  virtual void fill(float* x, std::size_t n, float value) = 0;
  virtual void scale(float* x, std::size_t n, float alpha) = 0;                 // x *= alpha
  virtual void axpy(std::size_t n, float alpha, const float* x, float* y) = 0;  // y += alpha x
  // y[r][c] += bias[c] for a rows x cols row-major y.
  virtual void bias_add(float* y, const float* bias, std::size_t rows, std::size_t cols) = 0;
  // Sums the rows of dy (rows x cols) into dbias[c]: the gradient of bias_add.
  virtual void bias_grad(const float* dy, float* dbias, std::size_t rows, std::size_t cols) = 0;
  virtual void relu(const float* x, float* y, std::size_t n) = 0;  // y = max(x, 0)
  // dx = x > 0 ? dy : 0 (the gradient at exactly 0 is taken as 0, like PyTorch).
  virtual void relu_grad(const float* x, const float* dy, float* dx, std::size_t n) = 0;
  // For each of `rows` rows of `cols` logits: probs = softmax(logits) and
  // loss[r] = logsumexp(logits[r]) - logits[r][label[r]], computed with the row's maximum
  // subtracted so large logits do not overflow. A label outside [0, cols) gives loss NaN.
  virtual void softmax_xent_forward(const float* logits, const std::int32_t* labels, float* probs,
                                    float* loss, std::size_t rows, std::size_t cols) = 0;
  // dlogits = (probs - onehot(label)) * scale; scale is usually 1 / (global batch size).
  // probs and dlogits may be the same buffer.
  virtual void softmax_xent_backward(const float* probs, const std::int32_t* labels, float* dlogits,
                                     std::size_t rows, std::size_t cols, float scale) = 0;
  virtual void sgd_momentum(float* w, const float* grad, float* velocity, std::size_t n,
                            const SgdParams& p) = 0;
  virtual void adam(float* w, const float* grad, float* m, float* v, std::size_t n,
                    const AdamParams& p) = 0;
};

// The backend of a device as discovery reported it: host, sim or cuda. For cuda it loads the
// plugin (NUBO_CUDA_PLUGIN, or libnubo_cuda.so beside libnubo) and throws Errc::unavailable
// with the reason (no plugin, no driver, no such device) when it cannot.
std::unique_ptr<DeviceBackend> make_backend(const Device& device);

}  // namespace nubo::detail
