// A worker's CUDA stream, native handles and events in C.
#include "nubo_parallel.h"
#include "parallel_handles.hpp"
#include "sized_struct.hpp"

using namespace nubo::capi;

extern "C" {

NUBO_C_API nubo_status nubo_worker_native(const nubo_worker* worker, nubo_worker_native_info* out) {
  return guard("nubo_worker_native", [&] {
    const nubo::NativeHandles h = require_worker(worker).native();
    nubo_worker_native_info c{};
    c.cuda_stream = h.cuda_stream;
    c.cublas_handle = h.cublas_handle;
    c.nccl_comm = h.nccl_comm;
    c.device_ordinal = h.device_ordinal;
    write_sized(c, require(out, "out"), "out", "nubo_worker_native_info");
  });
}

NUBO_C_API nubo_status nubo_worker_use_stream(nubo_worker* worker, void* cuda_stream) {
  return guard("nubo_worker_use_stream", [&] { require_worker(worker).use_stream(cuda_stream); });
}

NUBO_C_API nubo_status nubo_worker_use_own_stream(nubo_worker* worker) {
  return guard("nubo_worker_use_own_stream", [&] { require_worker(worker).use_own_stream(); });
}

NUBO_C_API nubo_status nubo_worker_record_event(nubo_worker* worker, nubo_event** out) {
  return guard("nubo_worker_record_event", [&] {
    require(out, "out");
    *out = nullptr;
    nubo::Worker& w = require_worker(worker);
    *out = to_handle(new nubo::Event(w.record_event()));
  });
}

NUBO_C_API nubo_status nubo_worker_wait_event(nubo_worker* worker, const nubo_event* event) {
  return guard("nubo_worker_wait_event",
               [&] { require_worker(worker).wait_event(require_event(event)); });
}

NUBO_C_API nubo_status nubo_worker_wait_native_event(nubo_worker* worker, void* cuda_event) {
  return guard("nubo_worker_wait_native_event",
               [&] { require_worker(worker).wait_native_event(cuda_event); });
}

NUBO_C_API nubo_status nubo_event_synchronize(const nubo_event* event) {
  return guard("nubo_event_synchronize", [&] { require_event(event).synchronize(); });
}

NUBO_C_API int nubo_event_done(const nubo_event* event) {
  if (!event) return 1;
  int done = 1;
  // done() may report an asynchronous CUDA failure: that is "done" too, and the failure is kept
  // for nubo_last_error() and the next synchronising call.
  guard("nubo_event_done", [&] { done = require_event(event).done() ? 1 : 0; });
  return done;
}

NUBO_C_API void* nubo_event_native(const nubo_event* event) {
  return event ? reinterpret_cast<const nubo::Event*>(event)->native() : nullptr;
}

NUBO_C_API void nubo_event_free(nubo_event* event) {
  delete reinterpret_cast<nubo::Event*>(event);
}

}  // extern "C"
