#include "device/cuda/cuda_backend.hpp"

#include <cstddef>

#include "common/env.hpp"
#include "device/backend/backend_checks.hpp"
#include "device/cuda/cuda_backend_errors.hpp"
#include "device/cuda/cuda_backend_plugin.hpp"
#include "device/cuda/cuda_probe.hpp"
#include "nubo/error.hpp"
#include "nubo/units.hpp"

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
  void* native() override { return owner_.api()->event_native(event_); }
  nubo_cuda_event* handle() const { return event_; }

 private:
  const CudaBackend& owner_;
  nubo_cuda_event* event_;
};

// Why the device cannot be opened, in the words of discovery's diagnoses (no-nvidia-gpu,
// no-driver, driver-too-old...): the runtime's own error for a missing driver says "driver version
// is insufficient", which is misleading; the probe tells the cases apart.
std::string machine_diagnosis() {
  try {
    const CudaProbeResult probe = probe_cuda(env::cuda_plugin());
    std::string out;
    // With no device at all, every finding says why (no-nvidia-gpu is only info in discovery).
    for (const Diagnosis& d : probe.diagnoses)
      if (d.severity != Severity::info || probe.devices.empty())
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
                  describe() + ": out of memory: asked for " +
                      format_bytes(static_cast<double>(bytes)) + " with " +
                      format_bytes(static_cast<double>(in_use_.load())) +
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

void CudaBackend::adopt(const void* ptr, std::size_t bytes) {
  if (bytes == 0) return;
  if (!ptr) throw Error(Errc::invalid_argument, describe() + ": the memory is a null pointer");
  int32_t kind = NUBO_CUDA_MEMORY_UNREGISTERED, ordinal = -1;
  nubo_cuda_status st{};
  check(api_->pointer_info(ptr, &kind, &ordinal, &st), st);
  if (kind != NUBO_CUDA_MEMORY_DEVICE && kind != NUBO_CUDA_MEMORY_MANAGED)
    throw Error(Errc::invalid_argument,
                describe() +
                    ": the memory is host memory, not memory of a GPU; a CUDA worker "
                    "works on device memory (copy it in with a buffer's write())");
  if (ordinal != device_.ordinal && kind == NUBO_CUDA_MEMORY_DEVICE)
    throw Error(Errc::invalid_argument, describe() + ": the memory lives on cuda " +
                                            std::to_string(ordinal) + ", not on this worker's GPU");
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

void CudaBackend::copy_from_peer(void* dst, const DeviceBackend& peer, const void* src,
                                 std::size_t bytes) {
  const auto* other = dynamic_cast<const CudaBackend*>(&peer);
  if (!other)
    throw Error(Errc::invalid_argument,
                describe() + ": cannot copy from " + peer.describe() + ": not a CUDA device");
  if (!NUBO_CUDA_TABLE_HAS(api_, peer_copy))
    throw Error(Errc::unavailable, describe() +
                                       ": the CUDA plugin predates peer copies; "
                                       "rebuild or reinstall it");
  nubo_cuda_status st{};
  check(api_->peer_copy(handle_, dst, src, other->device().ordinal, bytes, &st), st);
}

void* CudaBackend::allocate_host(std::size_t bytes) {
  if (!NUBO_CUDA_TABLE_HAS(api_, host_allocate)) return DeviceBackend::allocate_host(bytes);
  void* out = nullptr;
  nubo_cuda_status st{};
  check(api_->host_allocate(bytes, &out, &st), st);
  return out;
}

void CudaBackend::free_host(void* ptr) noexcept {
  if (!NUBO_CUDA_TABLE_HAS(api_, host_free)) return DeviceBackend::free_host(ptr);
  nubo_cuda_status st{};
  (void)api_->host_free(ptr, &st);  // a failure to free leaves nothing to act on
}

void CudaBackend::synchronize() {
  nubo_cuda_status st{};
  check(api_->synchronize(handle_, &st), st);
}

NativeHandles CudaBackend::native() const {
  NativeHandles h;
  api_->native(handle_, &h.cuda_stream, &h.cublas_handle);
  h.device_ordinal = device_.ordinal;
  return h;
}

void CudaBackend::use_stream(void* stream) {
  nubo_cuda_status st{};
  check(api_->use_stream(handle_, stream, &st), st);
}

void CudaBackend::use_own_stream() {
  nubo_cuda_status st{};
  check(api_->use_own_stream(handle_, &st), st);
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

void CudaBackend::wait_native(void* cuda_event) {
  if (!cuda_event) throw Error(Errc::invalid_argument, describe() + ": the CUDA event is null");
  nubo_cuda_status st{};
  check(api_->event_wait_native(handle_, cuda_event, &st), st);
}

void CudaBackend::gemm(const GemmPlan& p, DType type, const void* a, const void* b, void* c) {
  const Gemm& g = p.g;
  nubo_cuda_gemm_args args{};
  args.trans_a = g.trans_a == Transpose::yes;
  args.trans_b = g.trans_b == Transpose::yes;
  args.dtype = static_cast<int32_t>(type);
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

void CudaBackend::fill(void* x, std::size_t n, std::size_t elem_bytes, std::uint64_t pattern) {
  nubo_cuda_status st{};
  check(api_->fill(handle_, x, n, static_cast<uint32_t>(elem_bytes), pattern, &st), st);
}

void CudaBackend::scale(DType type, void* x, std::size_t n, float alpha) {
  check_float_type(type, describe(), "scale");
  nubo_cuda_status st{};
  check(api_->scale(handle_, static_cast<int32_t>(type), x, n, alpha, &st), st);
}

void CudaBackend::axpy(DType type, std::size_t n, float alpha, const void* x, void* y) {
  check_float_type(type, describe(), "axpy");
  nubo_cuda_status st{};
  check(api_->axpy(handle_, static_cast<int32_t>(type), n, alpha, x, y, &st), st);
}

// --- Mixed precision and the optimiser ----------------------------------------------------------

void CudaBackend::require_optimizer_kernels(const char* what) const {
  if (!NUBO_CUDA_TABLE_HAS(api_, optimizer_step))
    throw Error(Errc::unavailable, describe() + ": " + what +
                                       ": the CUDA plugin predates the mixed-precision kernels; "
                                       "rebuild it with this nubo");
}

void CudaBackend::cast(DType from, const void* src, DType to, void* dst, std::size_t n) {
  check_float_type(from, describe(), "cast");
  check_float_type(to, describe(), "cast");
  require_optimizer_kernels("cast");
  nubo_cuda_status st{};
  check(api_->cast(handle_, static_cast<int32_t>(from), src, static_cast<int32_t>(to), dst, n, &st),
        st);
}

void CudaBackend::unscale_check(DType type, void* x, std::size_t n, float inv_scale, float* stats) {
  check_float_type(type, describe(), "unscale_check");
  require_optimizer_kernels("unscale_check");
  nubo_cuda_status st{};
  check(api_->unscale_check(handle_, static_cast<int32_t>(type), x, n, inv_scale, stats, &st), st);
}

void CudaBackend::optimizer_step(const math::OptimizerStep& s, std::size_t n, float* master,
                                 DType grad_type, const void* grad, float* m, float* v,
                                 DType param_type, void* param) {
  check_float_type(grad_type, describe(), "optimizer_step");
  if (param) check_float_type(param_type, describe(), "optimizer_step");
  require_optimizer_kernels("optimizer_step");
  const nubo_cuda_optimizer_args args{s.kind,       s.adam.lr,   s.momentum,          s.adam.beta1,
                                      s.adam.beta2, s.adam.eps,  s.adam.weight_decay, s.adam.c1,
                                      s.adam.c2,    s.grad_scale};
  nubo_cuda_status st{};
  check(api_->optimizer_step(handle_, &args, n, master, static_cast<int32_t>(grad_type), grad, m, v,
                             param ? static_cast<int32_t>(param_type) : -1, param, &st),
        st);
}

}  // namespace nubo::detail
