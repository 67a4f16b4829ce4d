#include "parallel/worker_checks.hpp"

#include <cstdint>

#include "nubo/error.hpp"

namespace nubo::detail {

void check_buffer(const WorkerState& w, const DeviceBuffer& b, const char* what, const char* name) {
  if (b.data() == nullptr) {
    throw Error(Errc::invalid_argument,
                std::string(what) + ": " + name + " is an empty (moved-from) buffer");
  }
  if (BufferAccess::backend(b) != w.backend.get()) {
    throw Error(Errc::invalid_argument,
                std::string(what) + ": " + name + " lives on " + b.device().name + " (device " +
                    std::to_string(b.device().index) + "), not on rank " + std::to_string(w.rank) +
                    "'s device: each worker passes buffers it allocated or wrapped itself");
  }
}

bool overlap(const DeviceBuffer& a, const DeviceBuffer& b) {
  if (a.bytes() == 0 || b.bytes() == 0) return false;
  auto pa = reinterpret_cast<std::uintptr_t>(a.data());
  auto pb = reinterpret_cast<std::uintptr_t>(b.data());
  return pa < pb + b.bytes() && pb < pa + a.bytes();
}

void check_pair(const WorkerState& w, const DeviceBuffer& in, const DeviceBuffer& out,
                const char* what) {
  check_buffer(w, in, what, "in");
  check_buffer(w, out, what, "out");
  if (in.dtype() != out.dtype()) {
    throw Error(Errc::invalid_argument, std::string(what) + ": in holds " +
                                            std::string(dtype_name(in.dtype())) + " but out " +
                                            std::string(dtype_name(out.dtype())));
  }
  if (overlap(in, out))
    throw Error(Errc::invalid_argument, std::string(what) + ": in and out overlap");
}

std::string size_text(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " element" : " elements");
}

void bad_call(const char* what, const std::string& why) {
  throw Error(Errc::invalid_argument, std::string(what) + ": " + why);
}

void check_float(const DeviceBuffer& b, const char* what, const char* name) {
  const DType t = b.dtype();
  if (t != DType::f32 && t != DType::f16 && t != DType::bf16)
    bad_call(what, std::string(name) + " holds " + std::string(dtype_name(t)) +
                       "; it works on f32, f16 and bf16");
}

}  // namespace nubo::detail
