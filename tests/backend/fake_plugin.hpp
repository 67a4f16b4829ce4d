// A fake CUDA plugin table: lets the CPU tests drive CudaBackend and NcclCommunicator through
// every outcome the real plugin can report (completion, NCCL errors, hangs, out of memory)
// without a GPU. Handles are plain host objects; memory is malloc'd.
#pragma once

#include <cstdlib>
#include <cstring>
#include <vector>

#include "device/cuda_backend.hpp"
#include "device/cuda_plugin_abi.h"

// The opaque plugin types, defined here for the fake only (the real ones live in the plugin).
struct nubo_cuda_backend {
  int ordinal = 0;
};
struct nubo_cuda_event {
  bool recorded = false;
};
struct nubo_cuda_comm {
  int rank = 0;
};

namespace nubo::testing {

struct FakeGpu {
  bool events_complete = true;            // what cudaEventQuery says
  std::int32_t async_error = 0;           // what ncclCommGetAsyncError says
  int collective_rc = NUBO_CUDA_CALL_OK;  // what enqueueing a collective returns
  std::int32_t collective_result = 0;     // its ncclResult_t when it fails
  int init_rc = NUBO_CUDA_CALL_OK;
  bool out_of_memory = false;
  int aborts = 0, destroys = 0, backends_destroyed = 0;
  std::vector<nubo_cuda_collective_args> calls;
  std::vector<std::string> published;  // unique ids handed out
};

inline FakeGpu& fake() {
  static FakeGpu g;
  return g;
}

namespace fakes {

inline int ok() {
  return NUBO_CUDA_CALL_OK;
}
inline int failed(nubo_cuda_status* st, int32_t lib, int32_t result, const char* msg) {
  st->library = lib;
  st->result = result;
  std::snprintf(st->call, sizeof st->call, "fake");
  std::snprintf(st->message, sizeof st->message, "%s", msg);
  return NUBO_CUDA_CALL_FAILED;
}

inline void destroy(nubo_cuda_backend* b) {
  ++fake().backends_destroyed;
  delete b;
}
inline int allocate(nubo_cuda_backend*, uint64_t bytes, void** out, nubo_cuda_status* st) {
  if (fake().out_of_memory) return failed(st, NUBO_CUDA_LIB_RUNTIME, 2, "out of memory");
  *out = std::malloc(bytes ? bytes : 1);
  return ok();
}
inline int free_memory(nubo_cuda_backend*, void* p, nubo_cuda_status*) {
  std::free(p);
  return ok();
}
inline int memory_info(nubo_cuda_backend*, uint64_t* f, uint64_t* t, nubo_cuda_status*) {
  *f = *t = 1 << 30;
  return ok();
}
inline int event_create(nubo_cuda_backend*, nubo_cuda_event** out, nubo_cuda_status*) {
  *out = new nubo_cuda_event{};
  return ok();
}
inline void event_destroy(nubo_cuda_event* e) {
  delete e;
}
inline int event_record(nubo_cuda_backend*, nubo_cuda_event* e, nubo_cuda_status*) {
  e->recorded = true;
  return ok();
}
inline int event_query(nubo_cuda_event*, int32_t* done, nubo_cuda_status*) {
  *done = fake().events_complete ? 1 : 0;
  return ok();
}
inline int nccl_unique_id(uint8_t id[NUBO_CUDA_NCCL_ID_SIZE], nubo_cuda_status*) {
  for (int i = 0; i < NUBO_CUDA_NCCL_ID_SIZE; ++i) id[i] = static_cast<uint8_t>(i);
  return ok();
}
inline int nccl_init_all(nubo_cuda_backend* const*, int32_t n, nubo_cuda_comm** out,
                         nubo_cuda_status*) {
  for (int i = 0; i < n; ++i) out[i] = new nubo_cuda_comm{i};
  return ok();
}
inline int nccl_init_rank(nubo_cuda_backend*, int32_t, const uint8_t*, int32_t rank,
                          nubo_cuda_comm** out, nubo_cuda_status* st) {
  if (fake().init_rc == NUBO_CUDA_CALL_FAILED)
    return failed(st, NUBO_CUDA_LIB_NCCL, 2, "bootstrap failed");
  *out = new nubo_cuda_comm{rank};
  return fake().init_rc;
}
inline int nccl_async_error(nubo_cuda_comm*, int32_t* r, nubo_cuda_status*) {
  *r = fake().async_error;
  return ok();
}
inline int nccl_collective(nubo_cuda_comm*, nubo_cuda_backend*, const nubo_cuda_collective_args* a,
                           nubo_cuda_status* st) {
  fake().calls.push_back(*a);
  if (fake().collective_rc == NUBO_CUDA_CALL_FAILED)
    return failed(st, NUBO_CUDA_LIB_NCCL, fake().collective_result, "enqueue failed");
  return fake().collective_rc;
}
inline void nccl_abort(nubo_cuda_comm* c) {
  ++fake().aborts;
  delete c;
}
inline int nccl_destroy(nubo_cuda_comm* c, nubo_cuda_status*) {
  ++fake().destroys;
  delete c;
  return ok();
}

}  // namespace fakes

// The table; with_nccl = false is a plugin built without NCCL.
inline const nubo_cuda_backend_api* fake_api(bool with_nccl = true) {
  static nubo_cuda_backend_api with{}, without{};
  for (auto* t : {&with, &without}) {
    t->struct_size = sizeof *t;
    t->api_version = NUBO_CUDA_BACKEND_API_VERSION;
    t->destroy = fakes::destroy;
    t->memory_info = fakes::memory_info;
    t->allocate = fakes::allocate;
    t->free = fakes::free_memory;
    t->event_create = fakes::event_create;
    t->event_destroy = fakes::event_destroy;
    t->event_record = fakes::event_record;
    t->event_query = fakes::event_query;
  }
  with.nccl_unique_id = fakes::nccl_unique_id;
  with.nccl_init_all = fakes::nccl_init_all;
  with.nccl_init_rank = fakes::nccl_init_rank;
  with.nccl_async_error = fakes::nccl_async_error;
  with.nccl_collective = fakes::nccl_collective;
  with.nccl_abort = fakes::nccl_abort;
  with.nccl_destroy = fakes::nccl_destroy;
  return with_nccl ? &with : &without;
}

inline std::unique_ptr<detail::CudaBackend> fake_backend(int ordinal = 0, bool with_nccl = true) {
  Device d;
  d.backend = Backend::cuda;
  d.index = d.ordinal = ordinal;
  d.name = "Fake GPU";
  return std::make_unique<detail::CudaBackend>(d, fake_api(with_nccl),
                                               new nubo_cuda_backend{ordinal});
}

}  // namespace nubo::testing
