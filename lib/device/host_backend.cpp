#include "device/host_backend.hpp"

#include <cstring>
#include <new>

#include "common/text.hpp"
#include "device/backend_checks.hpp"
#include "device/openblas.hpp"
#include "kernels/math.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

constexpr std::align_val_t kAlignment{256};  // what cudaMalloc guarantees, so code ports

// Host work is finished when the call returns, so a recorded event is always complete.
class HostEvent final : public DeviceEvent {
 public:
  bool done() override { return true; }
  void synchronize() override {}
};

int as_int(std::size_t v) {
  return static_cast<int>(v);
}  // plan_gemm checked the range

}  // namespace

HostBackend::HostBackend(Device device, std::size_t memory_limit)
    : device_(std::move(device)), limit_(memory_limit) {}

HostBackend::~HostBackend() {
  // Leftovers are the owner's bug, but freeing them keeps a failed run from leaking.
  for (const auto& [ptr, bytes] : allocations_)
    ::operator delete(const_cast<char*>(ptr), kAlignment);
}

std::string HostBackend::describe() const {
  return "cpu";
}

void* HostBackend::allocate(std::size_t bytes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const std::size_t used = in_use_.load();
  if (limit_ != 0 && (bytes > limit_ || used > limit_ - bytes))
    throw Error(Errc::out_of_memory,
                describe() + ": out of memory: asked for " + text::human_bytes(bytes) + " with " +
                    text::human_bytes(used) + " of " + text::human_bytes(limit_) +
                    " in use; free buffers or use smaller batches");
  // Zero bytes still get a distinct pointer, as malloc(0) may not.
  void* p = ::operator new(bytes == 0 ? 1 : bytes, kAlignment, std::nothrow);
  if (!p)
    throw Error(Errc::out_of_memory, describe() + ": the operating system refused " +
                                         text::human_bytes(bytes) + " of memory");
  allocations_.emplace(static_cast<const char*>(p), bytes);
  in_use_ += bytes;
  return p;
}

void HostBackend::free(void* ptr) {
  if (!ptr) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = allocations_.find(static_cast<const char*>(ptr));
  if (it == allocations_.end())
    throw Error(Errc::invalid_argument,
                describe() + ": free of a pointer this device did not allocate (or freed twice)");
  in_use_ -= it->second;
  allocations_.erase(it);
  ::operator delete(ptr, kAlignment);
}

bool HostBackend::owns(const void* ptr, std::size_t bytes) const {
  const auto* p = static_cast<const char*>(ptr);
  const std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocations_.upper_bound(p);  // the first allocation starting after p
  if (it == allocations_.begin()) return false;
  --it;
  const std::size_t offset = static_cast<std::size_t>(p - it->first);
  return offset <= it->second && bytes <= it->second - offset;
}

void HostBackend::check_range(const void*, std::size_t, const char*) const {}

void HostBackend::copy_to_device(void* dst, const void* host_src, std::size_t bytes) {
  if (bytes == 0) return;
  check_range(dst, bytes, "copy_to_device destination");
  std::memcpy(dst, host_src, bytes);
}

void HostBackend::copy_to_host(void* host_dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  check_range(src, bytes, "copy_to_host source");
  std::memcpy(host_dst, src, bytes);
}

void HostBackend::copy_on_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  check_range(dst, bytes, "copy_on_device destination");
  check_range(src, bytes, "copy_on_device source");
  std::memmove(dst, src, bytes);  // overlapping ranges are allowed, as with cudaMemcpy D2D
}

std::unique_ptr<DeviceEvent> HostBackend::create_event() {
  return std::make_unique<HostEvent>();
}

void HostBackend::record(DeviceEvent& event) {
  if (!dynamic_cast<HostEvent*>(&event))
    throw Error(Errc::invalid_argument,
                describe() + ": record of an event of another backend kind");
}

void HostBackend::wait(DeviceEvent& event) {
  // Host and sim events are complete when recorded; anything else must be waited for here.
  if (!dynamic_cast<HostEvent*>(&event)) event.synchronize();
}

void HostBackend::gemm(const Gemm& g, const void* a, const void* b, void* c) {
  const GemmPlan p = plan_gemm(g, describe());
  if (g.type != DType::f32)
    throw Error(Errc::unsupported,
                describe() + ": gemm in " + std::string(dtype_name(g.type)) +
                    " needs a CUDA device (cuBLAS); the CPU backend (OpenBLAS) does f32 only. "
                    "Convert to f32, or run on a GPU.");
  if (g.m == 0 || g.n == 0) return;
  check_range(a, p.a_bytes, "gemm A");
  check_range(b, p.b_bytes, "gemm B");
  check_range(c, p.c_bytes, "gemm C");
  openblas().sgemm(CblasRowMajor, g.trans_a == Transpose::yes ? CblasTrans : CblasNoTrans,
                   g.trans_b == Transpose::yes ? CblasTrans : CblasNoTrans, as_int(g.m),
                   as_int(g.n), as_int(g.k), g.alpha, static_cast<const float*>(a), as_int(p.g.lda),
                   static_cast<const float*>(b), as_int(p.g.ldb), g.beta, static_cast<float*>(c),
                   as_int(p.g.ldc));
}

// --- Kernels: loops over kernels/math.hpp --------------------------------------------------

void HostBackend::fill(float* x, std::size_t n, float value) {
  check_range(x, n * sizeof(float), "fill x");
  for (std::size_t i = 0; i < n; ++i) x[i] = value;
}

void HostBackend::scale(float* x, std::size_t n, float alpha) {
  check_range(x, n * sizeof(float), "scale x");
  for (std::size_t i = 0; i < n; ++i) x[i] *= alpha;
}

void HostBackend::axpy(std::size_t n, float alpha, const float* x, float* y) {
  check_range(x, n * sizeof(float), "axpy x");
  check_range(y, n * sizeof(float), "axpy y");
  for (std::size_t i = 0; i < n; ++i) y[i] = math::axpy(alpha, x[i], y[i]);
}

void HostBackend::bias_add(float* y, const float* bias, std::size_t rows, std::size_t cols) {
  const std::size_t n = checked_elements(rows, cols, describe(), "bias_add");
  check_range(y, n * sizeof(float), "bias_add y");
  check_range(bias, cols * sizeof(float), "bias_add bias");
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) y[r * cols + c] += bias[c];
}

void HostBackend::bias_grad(const float* dy, float* dbias, std::size_t rows, std::size_t cols) {
  const std::size_t n = checked_elements(rows, cols, describe(), "bias_grad");
  check_range(dy, n * sizeof(float), "bias_grad dy");
  check_range(dbias, cols * sizeof(float), "bias_grad dbias");
  for (std::size_t c = 0; c < cols; ++c) dbias[c] = 0.0f;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) dbias[c] += dy[r * cols + c];
}

void HostBackend::relu(const float* x, float* y, std::size_t n) {
  check_range(x, n * sizeof(float), "relu x");
  check_range(y, n * sizeof(float), "relu y");
  for (std::size_t i = 0; i < n; ++i) y[i] = math::relu(x[i]);
}

void HostBackend::relu_grad(const float* x, const float* dy, float* dx, std::size_t n) {
  check_range(x, n * sizeof(float), "relu_grad x");
  check_range(dy, n * sizeof(float), "relu_grad dy");
  check_range(dx, n * sizeof(float), "relu_grad dx");
  for (std::size_t i = 0; i < n; ++i) dx[i] = math::relu_grad(x[i], dy[i]);
}

void HostBackend::softmax_xent_forward(const float* logits, const std::int32_t* labels,
                                       float* probs, float* loss, std::size_t rows,
                                       std::size_t cols) {
  const std::size_t n = checked_elements(rows, cols, describe(), "softmax_xent_forward");
  check_range(logits, n * sizeof(float), "softmax_xent_forward logits");
  check_range(labels, rows * sizeof(std::int32_t), "softmax_xent_forward labels");
  check_range(probs, n * sizeof(float), "softmax_xent_forward probs");
  check_range(loss, rows * sizeof(float), "softmax_xent_forward loss");
  const auto c = static_cast<std::int64_t>(cols);
  for (std::size_t r = 0; r < rows; ++r)
    loss[r] = math::softmax_xent_row(logits + r * cols, c, labels[r], probs + r * cols);
}

void HostBackend::softmax_xent_backward(const float* probs, const std::int32_t* labels,
                                        float* dlogits, std::size_t rows, std::size_t cols,
                                        float scale) {
  const std::size_t n = checked_elements(rows, cols, describe(), "softmax_xent_backward");
  check_range(probs, n * sizeof(float), "softmax_xent_backward probs");
  check_range(labels, rows * sizeof(std::int32_t), "softmax_xent_backward labels");
  check_range(dlogits, n * sizeof(float), "softmax_xent_backward dlogits");
  for (std::size_t r = 0; r < rows; ++r) {
    const std::int64_t label = labels[r];
    for (std::size_t c = 0; c < cols; ++c)
      dlogits[r * cols + c] =
          math::xent_grad(probs[r * cols + c], static_cast<std::int64_t>(c) == label, scale);
  }
}

void HostBackend::sgd_momentum(float* w, const float* grad, float* velocity, std::size_t n,
                               const SgdParams& p) {
  check_range(w, n * sizeof(float), "sgd_momentum w");
  check_range(grad, n * sizeof(float), "sgd_momentum grad");
  check_range(velocity, n * sizeof(float), "sgd_momentum velocity");
  for (std::size_t i = 0; i < n; ++i)
    math::sgd_momentum_step(w[i], grad[i], velocity[i], p.lr, p.momentum, p.weight_decay);
}

void HostBackend::adam(float* w, const float* grad, float* m, float* v, std::size_t n,
                       const AdamParams& p) {
  check_adam(p, describe());
  check_range(w, n * sizeof(float), "adam w");
  check_range(grad, n * sizeof(float), "adam grad");
  check_range(m, n * sizeof(float), "adam m");
  check_range(v, n * sizeof(float), "adam v");
  const math::AdamStep s =
      math::adam_step_constants(p.lr, p.beta1, p.beta2, p.eps, p.weight_decay, p.step);
  for (std::size_t i = 0; i < n; ++i) math::adam_step(w[i], grad[i], m[i], v[i], s);
}

}  // namespace nubo::detail
