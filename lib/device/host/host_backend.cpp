#include "device/host/host_backend.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <new>

#include "device/backend/backend_checks.hpp"
#include "device/host/host_gemm.hpp"
#include "device/host/openblas_copies.hpp"
#include "nubo/error.hpp"
#include "nubo/half.hpp"
#include "nubo/units.hpp"
#include "nubo_plugin/math.hpp"

namespace nubo::detail {
namespace {

constexpr std::align_val_t kAlignment{256};  // what cudaMalloc guarantees, so code ports

// Host work is finished when the call returns, so a recorded event is always complete.
class HostEvent final : public DeviceEvent {
 public:
  bool done() override { return true; }
  void synchronize() override {}
};

// float with the explicit conversions of half and bfloat16, so one template serves all three.
struct Float {
  float v;
  explicit Float(float f) : v(f) {}
  explicit operator float() const { return v; }
};
static_assert(sizeof(Float) == sizeof(float));

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
    throw Error(Errc::out_of_memory, describe() + ": out of memory: asked for " +
                                         format_bytes(static_cast<double>(bytes)) + " with " +
                                         format_bytes(static_cast<double>(used)) + " of " +
                                         format_bytes(static_cast<double>(limit_)) +
                                         " in use; free buffers or use smaller batches");
  // Zero bytes still get a distinct pointer, as malloc(0) may not.
  void* p = ::operator new(bytes == 0 ? 1 : bytes, kAlignment, std::nothrow);
  if (!p)
    throw Error(Errc::out_of_memory, describe() + ": the operating system refused " +
                                         format_bytes(static_cast<double>(bytes)) + " of memory");
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
  const auto inside = [&](const char* start, std::size_t size) {
    if (p < start) return false;
    const std::size_t offset = static_cast<std::size_t>(p - start);
    return offset <= size && bytes <= size - offset;
  };
  const std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocations_.upper_bound(p);  // the first allocation starting after p
  if (it != allocations_.begin() && inside(std::prev(it)->first, std::prev(it)->second))
    return true;
  // Adopted ranges may nest or overlap (two views of one array): any that holds it will do.
  for (auto a = adopted_.begin(); a != adopted_.end() && a->first <= p; ++a)
    if (inside(a->first, a->second)) return true;
  return false;
}

void HostBackend::adopt(const void* ptr, std::size_t bytes) {
  if (bytes == 0) return;
  if (!ptr) throw Error(Errc::invalid_argument, describe() + ": the memory is a null pointer");
  const auto start = reinterpret_cast<std::uintptr_t>(ptr);
  if (start + bytes < start)
    throw Error(Errc::invalid_argument, describe() +
                                            ": the memory range wraps around the end "
                                            "of the address space");
  const std::lock_guard<std::mutex> lock(mutex_);
  adopted_.emplace(static_cast<const char*>(ptr), bytes);
}

void HostBackend::forget(const void* ptr, std::size_t bytes) noexcept {
  if (bytes == 0) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  auto [first, last] = adopted_.equal_range(static_cast<const char*>(ptr));
  for (auto it = first; it != last; ++it) {
    if (it->second == bytes) {
      adopted_.erase(it);
      return;
    }
  }
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

void HostBackend::copy_from_peer(void* dst, const DeviceBackend& peer, const void* src,
                                 std::size_t bytes) {
  if (!peer.host_accessible())
    throw Error(Errc::invalid_argument, describe() + ": cannot copy from " + peer.describe() +
                                            ": its memory is not host memory");
  if (bytes == 0) return;
  check_range(dst, bytes, "copy_from_peer destination");
  if (!src) throw Error(Errc::invalid_argument, describe() + ": copy_from_peer source is null");
  std::memcpy(dst, src, bytes);
}

void HostBackend::use_stream(void* stream) {
  if (stream)
    throw Error(Errc::invalid_argument,
                describe() +
                    ": use_stream of a CUDA stream on a device without streams (host "
                    "and sim workers run each call to completion)");
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

void HostBackend::wait_native(void*) {
  throw Error(Errc::invalid_argument,
              describe() + ": a CUDA event cannot order work on a device without streams");
}

void HostBackend::gemm(const GemmPlan& p, DType type, const void* a, const void* b, void* c) {
  if (p.g.m == 0 || p.g.n == 0) return;
  check_range(a, p.a_bytes, "gemm A");
  check_range(b, p.b_bytes, "gemm B");
  check_range(c, p.c_bytes, "gemm C");
  host_gemm(blas_ ? blas_->lease(blas_worker_).blas() : openblas(), p, type, a, b, c);
}

int HostBackend::host_threads() const {
  return blas_ ? blas_->lease(blas_worker_).threads() : openblas().get_num_threads();
}

// --- Elementwise kernels: computed in f32, stored in the buffer's type --------------------

namespace {

template <class T>
void scale_as(void* x, std::size_t n, float alpha) {
  auto* p = static_cast<T*>(x);
  for (std::size_t i = 0; i < n; ++i) p[i] = T(static_cast<float>(p[i]) * alpha);
}

template <class T>
void axpy_as(std::size_t n, float alpha, const void* x, void* y) {
  const auto* px = static_cast<const T*>(x);
  auto* py = static_cast<T*>(y);
  for (std::size_t i = 0; i < n; ++i)
    py[i] = T(math::axpy(alpha, static_cast<float>(px[i]), static_cast<float>(py[i])));
}

template <class T>
void fill_as(void* x, std::size_t n, std::uint64_t pattern) {
  T value;
  std::memcpy(&value, &pattern, sizeof value);  // the low bytes, on this little-endian host
  std::fill_n(static_cast<T*>(x), n, value);
}

}  // namespace

void HostBackend::fill(void* x, std::size_t n, std::size_t elem_bytes, std::uint64_t pattern) {
  const std::size_t bytes = checked_elements(n, elem_bytes, describe(), "fill");
  check_range(x, bytes, "fill x");
  switch (elem_bytes) {
    case 1:
      return fill_as<std::uint8_t>(x, n, pattern);
    case 2:
      return fill_as<std::uint16_t>(x, n, pattern);
    case 4:
      return fill_as<std::uint32_t>(x, n, pattern);
    case 8:
      return fill_as<std::uint64_t>(x, n, pattern);
    default:
      throw Error(Errc::invalid_argument, describe() + ": fill of " + std::to_string(elem_bytes) +
                                              "-byte elements (1, 2, 4 or 8)");
  }
}

void HostBackend::scale(DType type, void* x, std::size_t n, float alpha) {
  check_float_type(type, describe(), "scale");
  check_range(x, checked_elements(n, dtype_size(type), describe(), "scale"), "scale x");
  if (type == DType::f32) return scale_as<Float>(x, n, alpha);
  if (type == DType::f16) return scale_as<half>(x, n, alpha);
  return scale_as<bfloat16>(x, n, alpha);
}

void HostBackend::axpy(DType type, std::size_t n, float alpha, const void* x, void* y) {
  check_float_type(type, describe(), "axpy");
  const std::size_t bytes = checked_elements(n, dtype_size(type), describe(), "axpy");
  check_range(x, bytes, "axpy x");
  check_range(y, bytes, "axpy y");
  if (type == DType::f32) return axpy_as<Float>(n, alpha, x, y);
  if (type == DType::f16) return axpy_as<half>(n, alpha, x, y);
  return axpy_as<bfloat16>(n, alpha, x, y);
}

}  // namespace nubo::detail
