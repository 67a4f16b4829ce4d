#include "parallel/dlpack.hpp"

#include <dlpack/dlpack.h>

#include <limits>

#include "nubo/error.hpp"
#include "parallel/adopted_memory.hpp"
#include "parallel/team_state.hpp"

namespace nubo::detail {
namespace {

[[noreturn]] void bad(const std::string& what) {
  throw Error(Errc::invalid_argument, "DLPack: " + what);
}

DLDataType dl_type(DType t) {
  switch (t) {
    case DType::f32:
      return {kDLFloat, 32, 1};
    case DType::f16:
      return {kDLFloat, 16, 1};
    case DType::bf16:
      return {kDLBfloat, 16, 1};
    case DType::i32:
      return {kDLInt, 32, 1};
    case DType::i64:
      return {kDLInt, 64, 1};
    case DType::tf32:
      break;  // no buffer holds it
  }
  bad("unknown dtype " + std::to_string(static_cast<int>(t)));
}

std::string dl_type_name(DLDataType t) {
  std::string code;
  switch (t.code) {
    case kDLInt:
      code = "int";
      break;
    case kDLUInt:
      code = "uint";
      break;
    case kDLFloat:
      code = "float";
      break;
    case kDLBfloat:
      code = "bfloat";
      break;
    case kDLComplex:
      code = "complex";
      break;
    default:  // appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "x" + string
      code.append("code ").append(std::to_string(t.code)).append(" ");
  }
  std::string name = code + std::to_string(t.bits);
  if (t.lanes != 1) name.append("x").append(std::to_string(t.lanes));
  return name;
}

DType nubo_type(DLDataType t) {
  for (DType d : {DType::f32, DType::f16, DType::bf16, DType::i32, DType::i64}) {
    const DLDataType m = dl_type(d);
    if (m.code == t.code && m.bits == t.bits && m.lanes == t.lanes) return d;
  }
  bad("dtype " + dl_type_name(t) +
      " has no nubo type (f32, f16, bf16, i32 and i64 are: float32, float16, bfloat16, int32, "
      "int64)");
}

const char* device_name(int32_t type) {
  switch (type) {
    case kDLCPU:
      return "CPU";
    case kDLCUDA:
      return "CUDA";
    case kDLCUDAHost:
      return "CUDA pinned host";
    case kDLCUDAManaged:
      return "CUDA managed";
    case kDLROCM:
      return "ROCm";
    default:
      return "another kind of";
  }
}

// The memory must be the worker's own kind: host memory for host and sim workers (pinned host
// memory is host memory too), memory of this GPU for CUDA workers.
void check_device(const DeviceBackend& backend, DLDevice d) {
  const std::string where =
      std::string(device_name(d.device_type)) + " device " + std::to_string(d.device_id);
  if (backend.host_accessible()) {
    if (d.device_type != kDLCPU && d.device_type != kDLCUDAHost)
      bad("the tensor lives on " + where + " memory, but " + backend.describe() +
          " works on host memory: move it to the CPU first (tensor.cpu())");
    return;
  }
  const bool cuda = d.device_type == kDLCUDA || d.device_type == kDLCUDAManaged;
  if (!cuda || (d.device_type == kDLCUDA && d.device_id != backend.device().ordinal))
    bad("the tensor lives on " + where + " memory, but this worker is " + backend.describe() +
        ": move it to that GPU first (tensor.to('cuda:" + std::to_string(backend.device().ordinal) +
        "'))");
}

// Elements of a compact row-major tensor; strides must say the same (a dimension of size 1
// may have any stride, as NumPy and PyTorch both produce).
std::size_t checked_count(const DLTensor& t) {
  if (t.ndim < 0) bad("ndim is negative (" + std::to_string(t.ndim) + ")");
  if (t.ndim > 0 && !t.shape)
    bad("shape is null for a tensor of " + std::to_string(t.ndim) + " dimensions");
  std::size_t count = 1;
  for (int i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) bad("dimension " + std::to_string(i) + " has negative size");
    const auto n = static_cast<std::size_t>(t.shape[i]);
    if (n != 0 && count > std::numeric_limits<std::size_t>::max() / n)
      bad("the element count overflows");
    count *= n;
  }
  if (t.strides && count > 0) {
    std::int64_t expect = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
      if (t.shape[i] != 1 && t.strides[i] != expect)
        bad("the tensor is not compact row-major (dimension " + std::to_string(i) + " has stride " +
            std::to_string(t.strides[i]) + ", not " + std::to_string(expect) +
            "): pass a contiguous copy (numpy.ascontiguousarray, tensor.contiguous())");
      expect *= t.shape[i];
    }
  }
  return count;
}

// What an exported tensor carries: the memory it shares, and the shape it points at.
struct Export {
  DLManagedTensor tensor{};
  std::shared_ptr<void> memory;
  std::shared_ptr<DeviceBackend> backend;
  std::int64_t shape[1] = {0};
};

}  // namespace

DLManagedTensor* export_dlpack(const DeviceBuffer& b) {
  if (!b.data()) bad("the buffer is empty (moved from)");
  if (b.size() > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()))
    bad("the buffer is too large for a DLPack shape");
  auto e = std::make_unique<Export>();
  e->memory = BufferAccess::memory(b);
  e->backend = BufferAccess::shared_backend(b);
  e->shape[0] = static_cast<std::int64_t>(b.size());
  DLTensor& t = e->tensor.dl_tensor;
  t.data = const_cast<void*>(b.data());
  t.device = e->backend->host_accessible()
                 ? DLDevice{kDLCPU, 0}
                 : DLDevice{kDLCUDA, static_cast<std::int32_t>(e->backend->device().ordinal)};
  t.ndim = 1;
  t.dtype = dl_type(b.dtype());
  t.shape = e->shape;
  t.strides = nullptr;  // compact
  t.byte_offset = 0;
  e->tensor.manager_ctx = e.get();
  e->tensor.deleter = [](DLManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); };
  return &e.release()->tensor;
}

DeviceBuffer import_dlpack(const std::shared_ptr<DeviceBackend>& backend, DLManagedTensor* m) {
  if (!m) bad("the tensor is null");
  const DLTensor& t = m->dl_tensor;
  check_device(*backend, t.device);
  const DType type = nubo_type(t.dtype);
  const std::size_t count = checked_count(t);
  if (count > std::numeric_limits<std::size_t>::max() / dtype_size(type))
    bad("the tensor's size in bytes overflows");
  const std::size_t bytes = count * dtype_size(type);
  if (!t.data && count > 0) bad("the tensor's data pointer is null");
  void* ptr = t.data ? static_cast<unsigned char*>(t.data) + t.byte_offset : no_elements();
  // Once adopted, the buffer owns the tensor and hands it back when the memory is let go.
  auto memory = adopt_memory(backend, ptr, bytes, [m] {
    if (m->deleter) m->deleter(m);
  });
  return BufferAccess::make(backend, std::move(memory), ptr, type, count);
}

}  // namespace nubo::detail
