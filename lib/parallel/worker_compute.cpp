// Worker: memory (alloc, wrap, DLPack), compute (gemm and the elementwise kernels), streams and
// events. Each call checks its buffers (worker_checks.hpp) and then queues on the worker's
// backend, so everything a worker does is ordered on its stream.
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "device/backend/backend_checks.hpp"
#include "nubo/error.hpp"
#include "parallel/adopted_memory.hpp"
#include "parallel/dlpack.hpp"
#include "parallel/team_state.hpp"
#include "parallel/worker_checks.hpp"

namespace nubo {
namespace {

using detail::check_buffer;
using detail::overlap;
using detail::size_text;

using detail::bad_call;
using detail::check_float;

// The value as the bytes of one element of `type`; invalid_argument when it does not fit.
std::uint64_t element_bits(DType type, double value) {
  const auto as_bits = [](auto v) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof v);
    return bits;
  };
  const auto text = [&] {
    std::ostringstream s;
    s << value;
    return s.str();
  };
  if (type == DType::i32 || type == DType::i64) {
    const double lo = type == DType::i32 ? -2147483648.0 : -9223372036854775808.0;
    if (!(value == std::trunc(value) && value >= lo && value < -lo))
      bad_call("fill",
               text() + " is not a whole number in the range of " + std::string(dtype_name(type)));
    return type == DType::i32 ? as_bits(static_cast<std::int32_t>(value))
                              : as_bits(static_cast<std::int64_t>(value));
  }
  if (std::isfinite(value) && std::abs(value) > std::numeric_limits<float>::max())
    bad_call("fill", text() + " is outside the range of f32 (the value is converted through f32)");
  const auto f = static_cast<float>(value);
  if (type == DType::f16) return as_bits(half(f));
  if (type == DType::bf16) return as_bits(bfloat16(f));
  return as_bits(f);
}

}  // namespace

// --- Memory ----------------------------------------------------------------------------------

DeviceBuffer Worker::alloc(DType type, std::size_t count) {
  return detail::BufferAccess::allocate(state_->backend, type, count);
}

DeviceBuffer Worker::wrap(void* data, DType type, std::size_t count) {
  const std::size_t es = dtype_size(type);
  if (es == 0) bad_call("wrap", "unknown dtype " + std::to_string(static_cast<int>(type)));
  if (count > std::numeric_limits<std::size_t>::max() / es)
    bad_call("wrap", std::to_string(count) + " elements of " + std::string(dtype_name(type)) +
                         " overflow the address space");
  if (!data) {
    if (count > 0) bad_call("wrap", "data is a null pointer");
    data = detail::no_elements();
  }
  auto memory = detail::adopt_memory(state_->backend, data, count * es);
  return detail::BufferAccess::make(state_->backend, std::move(memory), data, type, count);
}

DeviceBuffer Worker::from_dlpack(DLManagedTensor* tensor) {
  return detail::import_dlpack(state_->backend, tensor);
}

std::size_t Worker::bytes_in_use() const {
  return state_->backend->bytes_in_use();
}

// --- Compute ---------------------------------------------------------------------------------

void Worker::gemm(const Gemm& g, const DeviceBuffer& a, const DeviceBuffer& b, DeviceBuffer& c) {
  auto held = state_->take();
  check_buffer(*state_, a, "gemm", "A");
  check_buffer(*state_, b, "gemm", "B");
  check_buffer(*state_, c, "gemm", "C");
  const DType type = c.dtype();
  if (a.dtype() != type || b.dtype() != type)
    bad_call("gemm", "A, B and C hold " + std::string(dtype_name(a.dtype())) + ", " +
                         std::string(dtype_name(b.dtype())) + " and " +
                         std::string(dtype_name(type)) +
                         "; they must be one type (f32, f16 or bf16)");
  const detail::GemmPlan p = detail::plan_gemm(g, type, *state_->backend);
  const auto fits = [&](const DeviceBuffer& buf, std::size_t needed, const char* name) {
    if (needed > buf.bytes())
      bad_call("gemm", std::string(name) + " holds " + size_text(buf.size()) +
                           " but the shape (m=" + std::to_string(g.m) +
                           ", n=" + std::to_string(g.n) + ", k=" + std::to_string(g.k) +
                           ", lda=" + std::to_string(p.g.lda) + ", ldb=" + std::to_string(p.g.ldb) +
                           ", ldc=" + std::to_string(p.g.ldc) + ") needs " +
                           size_text(needed / dtype_size(type)));
  };
  fits(a, p.a_bytes, "A");
  fits(b, p.b_bytes, "B");
  fits(c, p.c_bytes, "C");
  if (p.c_bytes > 0 && ((p.a_bytes > 0 && overlap(a, c)) || (p.b_bytes > 0 && overlap(b, c))))
    bad_call("gemm", "C overlaps A or B (the product would read what it writes)");
  state_->backend->gemm(p, type, a.data(), b.data(), c.data());
}

void Worker::fill(DeviceBuffer& x, double value) {
  auto held = state_->take();
  check_buffer(*state_, x, "fill", "x");
  state_->backend->fill(x.data(), x.size(), dtype_size(x.dtype()), element_bits(x.dtype(), value));
}

void Worker::scale(DeviceBuffer& x, float alpha) {
  auto held = state_->take();
  check_buffer(*state_, x, "scale", "x");
  check_float(x, "scale", "x");
  state_->backend->scale(x.dtype(), x.data(), x.size(), alpha);
}

void Worker::axpy(float alpha, const DeviceBuffer& x, DeviceBuffer& y) {
  auto held = state_->take();
  check_buffer(*state_, x, "axpy", "x");
  check_buffer(*state_, y, "axpy", "y");
  check_float(y, "axpy", "y");
  if (x.dtype() != y.dtype())
    bad_call("axpy", "x holds " + std::string(dtype_name(x.dtype())) + " but y " +
                         std::string(dtype_name(y.dtype())));
  if (x.size() != y.size())
    bad_call("axpy", "x holds " + size_text(x.size()) + " but y " + size_text(y.size()));
  if (overlap(x, y) && x.data() != y.data())
    bad_call("axpy", "x and y overlap without being the same buffer");
  state_->backend->axpy(y.dtype(), y.size(), alpha, x.data(), y.data());
}

void Worker::synchronize() {
  auto held = state_->take();
  state_->backend->synchronize();
}

// --- Streams and events ----------------------------------------------------------------------

NativeHandles Worker::native() const {
  NativeHandles h = state_->backend->native();
  h.nccl_comm = state_->comm->native();
  return h;
}

void Worker::use_stream(void* cuda_stream) {
  auto held = state_->take();
  state_->backend->use_stream(cuda_stream);
}

void Worker::use_own_stream() {
  auto held = state_->take();
  state_->backend->use_own_stream();
}

Event Worker::record_event() {
  auto held = state_->take();
  std::shared_ptr<detail::DeviceEvent> e = state_->backend->create_event();
  state_->backend->record(*e);
  return Event(state_->backend, std::move(e));
}

void Worker::wait_event(const Event& event) {
  auto held = state_->take();
  detail::DeviceEvent* e = detail::EventAccess::event(event);
  if (!e) bad_call("wait_event", "the event is empty (moved from)");
  state_->backend->wait(*e);
}

void Worker::wait_native_event(void* cuda_event) {
  auto held = state_->take();
  state_->backend->wait_native(cuda_event);
}

// --- Event -----------------------------------------------------------------------------------

Event::Event() = default;
Event::Event(std::shared_ptr<detail::DeviceBackend> backend,
             std::shared_ptr<detail::DeviceEvent> event)
    : backend_(std::move(backend)), event_(std::move(event)) {}
Event::Event(Event&&) noexcept = default;
Event& Event::operator=(Event&&) noexcept = default;
Event::~Event() = default;

bool Event::done() const {
  return !event_ || event_->done();
}

void Event::synchronize() const {
  if (event_) event_->synchronize();
}

void* Event::native() const {
  return event_ ? event_->native() : nullptr;
}

}  // namespace nubo
