#include "device/cuda_backend.hpp"

#include "common/env.hpp"
#include "common/text.hpp"
#include "device/backend_checks.hpp"
#include "device/cuda_backend_errors.hpp"
#include "device/cuda_backend_plugin.hpp"
#include "device/cuda_probe.hpp"
#include "kernels/math.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

class CudaEvent final : public DeviceEvent {
 public:
  CudaEvent(const CudaBackend& owner, nubo_cuda_event* e) : owner_(owner), event_(e) {}
  ~CudaEvent() override { owner_.api()->event_destroy(event_); }

  bool done() override {
    nubo_cuda_status st{};
    int32_t finished = 0;
    owner_.check(owner_.api()->event_query(event_, &finished, &st), st);
    return finished != 0;
  }
  void synchronize() override {
    nubo_cuda_status st{};
    owner_.check(owner_.api()->event_synchronize(event_, &st), st);
  }
  nubo_cuda_event* handle() const { return event_; }

 private:
  const CudaBackend& owner_;
  nubo_cuda_event* event_;
};

// Why the device cannot be opened, in the words of discovery's diagnoses (no-driver,
// driver-too-old...): the runtime's own error for a missing driver says "driver version is
// insufficient", which is misleading; the probe tells the cases apart.
std::string machine_diagnosis() {
  try {
    const CudaProbeResult probe = probe_cuda(env::cuda_plugin());
    std::string out;
    for (const Diagnosis& d : probe.diagnoses)
      if (d.severity != Severity::info)
        out += " [" + d.code + "] " + d.message + (d.advice.empty() ? "" : " " + d.advice);
    return out;
  } catch (const std::exception&) {
    return {};  // the original error is still reported
  }
}

}  // namespace

std::unique_ptr<CudaBackend> CudaBackend::open(const Device& device) {
  const CudaBackendPlugin plugin = load_cuda_backend_plugin();
  nubo_cuda_backend* handle = nullptr;
  nubo_cuda_status st{};
  if (plugin.api->create(device.ordinal, &handle, &st) != NUBO_CUDA_CALL_OK) {
    const std::string who = "cuda " + std::to_string(device.ordinal) + ": cannot open the device";
    const Errc code = errc_for(st);
    if (code != Errc::unavailable) throw_cuda(st, who);
    throw Error(Errc::unavailable, who + ": " + describe_status(st) + "." + machine_diagnosis());
  }
  return std::make_unique<CudaBackend>(device, plugin.api, handle);
}

CudaBackend::CudaBackend(Device device, const nubo_cuda_backend_api* api, nubo_cuda_backend* handle)
    : device_(std::move(device)), api_(api), handle_(handle) {}

CudaBackend::~CudaBackend() {
  nubo_cuda_status st{};
  for (const auto& [ptr, bytes] : allocations_) api_->free(handle_, ptr, &st);
  api_->destroy(handle_);
}

std::string CudaBackend::describe() const {
  return "cuda " + std::to_string(device_.ordinal) +
         (device_.name.empty() ? std::string() : " (" + device_.name + ")");
}

void CudaBackend::check(int rc, const nubo_cuda_status& status) const {
  if (rc != NUBO_CUDA_CALL_OK) throw_cuda(status, describe());
}

std::size_t CudaBackend::memory_limit() const {
  if (device_.memory_total) return static_cast<std::size_t>(device_.memory_total);
  uint64_t free_bytes = 0, total = 0;
  nubo_cuda_status st{};
  check(api_->memory_info(handle_, &free_bytes, &total, &st), st);
  return static_cast<std::size_t>(total);
}

void* CudaBackend::allocate(std::size_t bytes) {
  void* p = nullptr;
  nubo_cuda_status st{};
  if (api_->allocate(handle_, bytes, &p, &st) != NUBO_CUDA_CALL_OK) {
    if (errc_for(st) == Errc::out_of_memory)
      throw Error(Errc::out_of_memory,
                  describe() + ": out of memory: asked for " + text::human_bytes(bytes) + " with " +
                      text::human_bytes(in_use_.load()) +
                      " held by nubo on this device; free buffers or use smaller batches (" +
                      describe_status(st) + ")");
    throw_cuda(st, describe());
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  allocations_.emplace(p, bytes);
  in_use_ += bytes;
  return p;
}

void CudaBackend::free(void* ptr) {
  if (!ptr) return;
  std::size_t bytes = 0;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = allocations_.find(ptr);
    if (it == allocations_.end())
      throw Error(Errc::invalid_argument, describe() +
                                              ": free of a pointer this device did not "
                                              "allocate (or freed twice)");
    bytes = it->second;
    allocations_.erase(it);
  }
  in_use_ -= bytes;
  nubo_cuda_status st{};
  check(api_->free(handle_, ptr, &st), st);
}

void CudaBackend::copy_to_device(void* dst, const void* host_src, std::size_t bytes) {
  nubo_cuda_status st{};
  check(api_->copy(handle_, dst, host_src, bytes, NUBO_CUDA_COPY_TO_DEVICE, &st), st);
}

void CudaBackend::copy_to_host(void* host_dst, const void* src, std::size_t bytes) {
  nubo_cuda_status st{};
  check(api_->copy(handle_, host_dst, src, bytes, NUBO_CUDA_COPY_TO_HOST, &st), st);
}

void CudaBackend::copy_on_device(void* dst, const void* src, std::size_t bytes) {
  nubo_cuda_status st{};
  check(api_->copy(handle_, dst, src, bytes, NUBO_CUDA_COPY_ON_DEVICE, &st), st);
}

void CudaBackend::synchronize() {
  nubo_cuda_status st{};
  check(api_->synchronize(handle_, &st), st);
}

std::unique_ptr<DeviceEvent> CudaBackend::create_event() {
  nubo_cuda_event* e = nullptr;
  nubo_cuda_status st{};
  check(api_->event_create(handle_, &e, &st), st);
  return std::make_unique<CudaEvent>(*this, e);
}

void CudaBackend::record(DeviceEvent& event) {
  auto* e = dynamic_cast<CudaEvent*>(&event);
  if (!e) throw Error(Errc::invalid_argument, describe() + ": record of a non-CUDA event");
  nubo_cuda_status st{};
  check(api_->event_record(handle_, e->handle(), &st), st);
}

void CudaBackend::wait(DeviceEvent& event) {
  auto* e = dynamic_cast<CudaEvent*>(&event);
  if (!e) {
    event.synchronize();  // a host or sim event: complete once recorded, nothing to queue
    return;
  }
  nubo_cuda_status st{};
  check(api_->event_wait(handle_, e->handle(), &st), st);
}

void CudaBackend::gemm(const Gemm& g, const void* a, const void* b, void* c) {
  const GemmPlan p = plan_gemm(g, describe());
  nubo_cuda_gemm_args args{};
  args.trans_a = g.trans_a == Transpose::yes;
  args.trans_b = g.trans_b == Transpose::yes;
  args.dtype = static_cast<int32_t>(g.type);
  args.m = static_cast<int64_t>(g.m);
  args.n = static_cast<int64_t>(g.n);
  args.k = static_cast<int64_t>(g.k);
  args.lda = static_cast<int64_t>(p.g.lda);
  args.ldb = static_cast<int64_t>(p.g.ldb);
  args.ldc = static_cast<int64_t>(p.g.ldc);
  args.alpha = g.alpha;
  args.beta = g.beta;
  args.a = a;
  args.b = b;
  args.c = c;
  nubo_cuda_status st{};
  check(api_->gemm(handle_, &args, &st), st);
}

void CudaBackend::fill(float* x, std::size_t n, float value) {
  nubo_cuda_status st{};
  check(api_->fill(handle_, x, n, value, &st), st);
}

void CudaBackend::scale(float* x, std::size_t n, float alpha) {
  nubo_cuda_status st{};
  check(api_->scale(handle_, x, n, alpha, &st), st);
}

void CudaBackend::axpy(std::size_t n, float alpha, const float* x, float* y) {
  nubo_cuda_status st{};
  check(api_->axpy(handle_, n, alpha, x, y, &st), st);
}

void CudaBackend::bias_add(float* y, const float* bias, std::size_t rows, std::size_t cols) {
  checked_elements(rows, cols, describe(), "bias_add");
  nubo_cuda_status st{};
  check(api_->bias_add(handle_, y, bias, rows, cols, &st), st);
}

void CudaBackend::bias_grad(const float* dy, float* dbias, std::size_t rows, std::size_t cols) {
  checked_elements(rows, cols, describe(), "bias_grad");
  nubo_cuda_status st{};
  check(api_->bias_grad(handle_, dy, dbias, rows, cols, &st), st);
}

void CudaBackend::relu(const float* x, float* y, std::size_t n) {
  nubo_cuda_status st{};
  check(api_->relu(handle_, x, y, n, &st), st);
}

void CudaBackend::relu_grad(const float* x, const float* dy, float* dx, std::size_t n) {
  nubo_cuda_status st{};
  check(api_->relu_grad(handle_, x, dy, dx, n, &st), st);
}

void CudaBackend::softmax_xent_forward(const float* logits, const std::int32_t* labels,
                                       float* probs, float* loss, std::size_t rows,
                                       std::size_t cols) {
  checked_elements(rows, cols, describe(), "softmax_xent_forward");
  nubo_cuda_status st{};
  check(api_->softmax_xent_forward(handle_, logits, labels, probs, loss, rows, cols, &st), st);
}

void CudaBackend::softmax_xent_backward(const float* probs, const std::int32_t* labels,
                                        float* dlogits, std::size_t rows, std::size_t cols,
                                        float scale) {
  checked_elements(rows, cols, describe(), "softmax_xent_backward");
  nubo_cuda_status st{};
  check(api_->softmax_xent_backward(handle_, probs, labels, dlogits, rows, cols, scale, &st), st);
}

void CudaBackend::sgd_momentum(float* w, const float* grad, float* velocity, std::size_t n,
                               const SgdParams& p) {
  nubo_cuda_status st{};
  check(api_->sgd_momentum(handle_, w, grad, velocity, n, p.lr, p.momentum, p.weight_decay, &st),
        st);
}

void CudaBackend::adam(float* w, const float* grad, float* m, float* v, std::size_t n,
                       const AdamParams& p) {
  check_adam(p, describe());
  const math::AdamStep s =
      math::adam_step_constants(p.lr, p.beta1, p.beta2, p.eps, p.weight_decay, p.step);
  const nubo_cuda_adam_args args{s.lr, s.beta1, s.beta2, s.eps, s.weight_decay, s.c1, s.c2};
  nubo_cuda_status st{};
  check(api_->adam(handle_, w, grad, m, v, n, &args, &st), st);
}

}  // namespace nubo::detail
