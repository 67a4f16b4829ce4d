// Buffers in C: memory on a worker's device, the application's memory wrapped, slices, DLPack,
// and copies to and from the host.
#include "nubo_parallel.h"
#include "parallel_handles.hpp"

namespace nubo::capi {

void give(nubo::DeviceBuffer buffer, nubo_buffer** out) {
  *out = to_handle(new nubo::DeviceBuffer(std::move(buffer)));
}

}  // namespace nubo::capi

using namespace nubo::capi;

extern "C" {

NUBO_C_API nubo_status nubo_buffer_create(nubo_worker* worker, nubo_dtype type, size_t count,
                                          nubo_buffer** out) {
  return guard("nubo_buffer_create", [&] {
    require(out, "out");
    *out = nullptr;
    nubo::Worker& w = require_worker(worker);
    give(w.alloc(to_dtype(type), count), out);
  });
}

NUBO_C_API nubo_status nubo_worker_wrap(nubo_worker* worker, void* data, nubo_dtype type,
                                        size_t count, nubo_buffer** out) {
  return guard("nubo_worker_wrap", [&] {
    require(out, "out");
    *out = nullptr;
    give(require_worker(worker).wrap(data, to_dtype(type), count), out);
  });
}

NUBO_C_API nubo_status nubo_buffer_slice(nubo_buffer* buffer, size_t offset, size_t count,
                                         nubo_buffer** out) {
  return guard("nubo_buffer_slice", [&] {
    require(out, "out");
    *out = nullptr;
    give(require_buffer(buffer, "buffer").slice(offset, count), out);
  });
}

NUBO_C_API void* nubo_buffer_data(nubo_buffer* buffer) {
  return buffer ? reinterpret_cast<nubo::DeviceBuffer*>(buffer)->data() : nullptr;
}

NUBO_C_API nubo_status nubo_worker_bytes_in_use(const nubo_worker* worker, size_t* out) {
  return guard("nubo_worker_bytes_in_use",
               [&] { *require(out, "out") = require_worker(worker).bytes_in_use(); });
}

NUBO_C_API nubo_status nubo_buffer_to_dlpack(nubo_buffer* buffer, struct DLManagedTensor** out) {
  return guard("nubo_buffer_to_dlpack", [&] {
    require(out, "out");
    *out = nullptr;
    *out = require_buffer(buffer, "buffer").to_dlpack();
  });
}

NUBO_C_API nubo_status nubo_buffer_from_dlpack(nubo_worker* worker, struct DLManagedTensor* tensor,
                                               nubo_buffer** out) {
  return guard("nubo_buffer_from_dlpack", [&] {
    require(out, "out");
    *out = nullptr;
    nubo::Worker& w = require_worker(worker);
    // Allocate the handle before the import takes the tensor: nothing can fail after it.
    auto handle = std::make_unique<nubo::DeviceBuffer>();
    *handle = w.from_dlpack(require(tensor, "tensor"));
    *out = to_handle(handle.release());
  });
}

NUBO_C_API void nubo_buffer_free(nubo_buffer* buffer) {
  delete reinterpret_cast<nubo::DeviceBuffer*>(buffer);
}

NUBO_C_API size_t nubo_buffer_size(const nubo_buffer* buffer) {
  return buffer ? reinterpret_cast<const nubo::DeviceBuffer*>(buffer)->size() : 0;
}

NUBO_C_API size_t nubo_buffer_bytes(const nubo_buffer* buffer) {
  return buffer ? reinterpret_cast<const nubo::DeviceBuffer*>(buffer)->bytes() : 0;
}

NUBO_C_API nubo_status nubo_buffer_dtype(const nubo_buffer* buffer, nubo_dtype* out) {
  return guard("nubo_buffer_dtype", [&] {
    const nubo::DeviceBuffer& b = require_buffer(buffer, "buffer");
    *require(out, "out") = static_cast<nubo_dtype>(b.dtype());
  });
}

NUBO_C_API nubo_status nubo_buffer_write(nubo_buffer* buffer, const void* host, size_t bytes,
                                         size_t offset) {
  return guard("nubo_buffer_write", [&] {
    nubo::DeviceBuffer& b = require_buffer(buffer, "buffer");
    if (bytes > 0) require(host, "host");
    b.write(host, bytes, offset);
  });
}

NUBO_C_API nubo_status nubo_buffer_read(const nubo_buffer* buffer, void* host, size_t bytes,
                                        size_t offset) {
  return guard("nubo_buffer_read", [&] {
    const nubo::DeviceBuffer& b = require_buffer(buffer, "buffer");
    if (bytes > 0) require(host, "host");
    b.read(host, bytes, offset);
  });
}

}  // extern "C"
