// Buffers in C: memory on a worker's device, and copies to and from the host.
#include "nubo_parallel.h"
#include "parallel_handles.hpp"

using namespace nubo::capi;

extern "C" {

NUBO_C_API nubo_status nubo_buffer_create(nubo_worker* worker, nubo_dtype type, size_t count,
                                          nubo_buffer** out) {
  return guard("nubo_buffer_create", [&] {
    require(out, "out");
    *out = nullptr;
    nubo::Worker& w = require_worker(worker);
    auto b = std::make_unique<nubo::DeviceBuffer>(w.alloc(to_dtype(type), count));
    *out = to_handle(b.release());
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
