// A fake CUDA plugin backend table: lets the CPU tests drive CudaBackend, NcclCommunicator and,
// built as a shared library (fake_plugin.cpp, loaded through NUBO_CUDA_PLUGIN), whole teams of
// "CUDA" workers through every outcome the real plugin can report (completion, NCCL errors,
// hangs, out of memory) without a GPU. Handles are plain host objects; "device" memory is
// malloc'd, and the fake computes on it like a GPU would (GEMM, fill, scale, axpy in f32, a
// one-rank NCCL), so results can be checked. Every enqueued call is logged with the stream it
// went to, which is how the tests see that work reaches the stream the application chose.
#pragma once

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device/cuda/cuda_backend.hpp"
#include "nubo_plugin/cuda_plugin_abi.h"

// The opaque plugin types, defined here for the fake only (the real ones live in the plugin).
struct nubo_cuda_backend {
  int ordinal = 0;
  char own = 0;         // its address is the backend's own "stream"
  void* stream = &own;  // the stream in use
};
struct nubo_cuda_event {
  bool recorded = false;
  void* stream = nullptr;  // where it was recorded
};
struct nubo_cuda_comm {
  int rank = 0;
};

namespace nubo::testing {

// One enqueued call: what, and on which stream.
struct FakeLaunch {
  std::string what;
  void* stream = nullptr;
};

struct FakeGpu {
  bool events_complete = true;            // what cudaEventQuery says
  std::int32_t async_error = 0;           // what ncclCommGetAsyncError says
  int collective_rc = NUBO_CUDA_CALL_OK;  // what enqueueing a collective returns
  std::int32_t collective_result = 0;     // its ncclResult_t when it fails
  int init_rc = NUBO_CUDA_CALL_OK;
  bool out_of_memory = false;
  int aborts = 0, destroys = 0, backends_destroyed = 0;
  std::vector<nubo_cuda_collective_args> calls;
  std::vector<FakeLaunch> launches;           // every enqueued call, in order
  std::vector<void*> waited_native;           // cudaEvent_t handed to event_wait_native
  std::map<const char*, std::size_t> device;  // live "device" allocations
};

inline FakeGpu& fake() {
  static FakeGpu g;
  return g;
}

// The fake's comm handles are never a real ncclComm_t; this one stands for it.
inline char g_fake_nccl_comm;

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
inline void log(nubo_cuda_backend* b, const char* what) {
  fake().launches.push_back({what, b->stream});
}

inline int create(int32_t ordinal, nubo_cuda_backend** out, nubo_cuda_status*) {
  *out = new nubo_cuda_backend{};
  (*out)->ordinal = ordinal;
  return ok();
}
inline void destroy(nubo_cuda_backend* b) {
  ++fake().backends_destroyed;
  delete b;
}
inline int allocate(nubo_cuda_backend*, uint64_t bytes, void** out, nubo_cuda_status* st) {
  if (fake().out_of_memory) return failed(st, NUBO_CUDA_LIB_RUNTIME, 2, "out of memory");
  *out = std::malloc(bytes ? bytes : 1);
  fake().device[static_cast<const char*>(*out)] = bytes;
  return ok();
}
inline int free_memory(nubo_cuda_backend*, void* p, nubo_cuda_status*) {
  fake().device.erase(static_cast<const char*>(p));
  std::free(p);
  return ok();
}
inline int memory_info(nubo_cuda_backend*, uint64_t* f, uint64_t* t, nubo_cuda_status*) {
  *f = *t = 1 << 30;
  return ok();
}
// Device memory of ordinal 0 when it lies inside a fake allocation, else ordinary host memory.
inline int pointer_info(const void* ptr, int32_t* kind, int32_t* ordinal, nubo_cuda_status*) {
  const auto* p = static_cast<const char*>(ptr);
  auto it = fake().device.upper_bound(p);
  const bool inside = it != fake().device.begin() &&
                      p < std::prev(it)->first + std::max<std::size_t>(std::prev(it)->second, 1);
  *kind = inside ? NUBO_CUDA_MEMORY_DEVICE : NUBO_CUDA_MEMORY_UNREGISTERED;
  *ordinal = inside ? 0 : -1;
  return ok();
}
inline int copy(nubo_cuda_backend* b, void* dst, const void* src, uint64_t bytes, int32_t,
                nubo_cuda_status*) {
  log(b, "copy");
  if (bytes) std::memmove(dst, src, bytes);
  return ok();
}
inline int synchronize(nubo_cuda_backend*, nubo_cuda_status*) {
  return ok();
}
inline int host_allocate(uint64_t bytes, void** out, nubo_cuda_status*) {
  *out = std::malloc(bytes ? bytes : 1);
  return ok();
}
inline int host_free(void* p, nubo_cuda_status*) {
  std::free(p);
  return ok();
}
inline int peer_copy(nubo_cuda_backend* b, void* dst, const void* src, int32_t, uint64_t bytes,
                     nubo_cuda_status*) {
  log(b, "peer_copy");
  if (bytes) std::memcpy(dst, src, bytes);
  return ok();
}
inline int use_stream(nubo_cuda_backend* b, void* stream, nubo_cuda_status*) {
  log(b, "handover");  // the event the old stream records for the new one
  b->stream = stream;
  return ok();
}
inline int use_own_stream(nubo_cuda_backend* b, nubo_cuda_status* st) {
  return use_stream(b, &b->own, st);
}
inline void native(nubo_cuda_backend* b, void** stream, void** blas) {
  *stream = b->stream;
  *blas = &b->own + 1;  // a distinct non-null address standing for the cuBLAS handle
}
inline int event_create(nubo_cuda_backend*, nubo_cuda_event** out, nubo_cuda_status*) {
  *out = new nubo_cuda_event{};
  return ok();
}
inline void event_destroy(nubo_cuda_event* e) {
  delete e;
}
inline int event_record(nubo_cuda_backend* b, nubo_cuda_event* e, nubo_cuda_status*) {
  log(b, "event_record");
  e->recorded = true;
  e->stream = b->stream;
  return ok();
}
inline int event_wait(nubo_cuda_backend* b, nubo_cuda_event*, nubo_cuda_status*) {
  log(b, "event_wait");
  return ok();
}
inline int event_wait_native(nubo_cuda_backend* b, void* event, nubo_cuda_status*) {
  log(b, "event_wait");
  fake().waited_native.push_back(event);
  return ok();
}
inline int event_query(nubo_cuda_event*, int32_t* done, nubo_cuda_status*) {
  *done = fake().events_complete ? 1 : 0;
  return ok();
}
inline int event_synchronize(nubo_cuda_event*, nubo_cuda_status*) {
  return ok();
}
inline void* event_native(nubo_cuda_event* e) {
  return e;
}
// f32 only, by the definition: enough for the tests to check what reached the "GPU".
inline int gemm(nubo_cuda_backend* b, const nubo_cuda_gemm_args* g, nubo_cuda_status* st) {
  log(b, "gemm");
  if (g->dtype != 0) return ok();
  const auto* a = static_cast<const float*>(g->a);
  const auto* m = static_cast<const float*>(g->b);
  auto* c = static_cast<float*>(g->c);
  for (int64_t i = 0; i < g->m; ++i)
    for (int64_t j = 0; j < g->n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < g->k; ++p)
        acc += (g->trans_a ? a[p * g->lda + i] : a[i * g->lda + p]) *
               (g->trans_b ? m[j * g->ldb + p] : m[p * g->ldb + j]);
      float& out = c[i * g->ldc + j];
      out = g->alpha * acc + (g->beta == 0.0f ? 0.0f : g->beta * out);
    }
  (void)st;
  return ok();
}
inline int fill(nubo_cuda_backend* b, void* x, uint64_t n, uint32_t elem, uint64_t pattern,
                nubo_cuda_status*) {
  log(b, "fill");
  for (uint64_t i = 0; i < n; ++i) std::memcpy(static_cast<char*>(x) + i * elem, &pattern, elem);
  return ok();
}
inline int scale(nubo_cuda_backend* b, int32_t dtype, void* x, uint64_t n, float alpha,
                 nubo_cuda_status*) {
  log(b, "scale");
  if (dtype == 0)
    for (uint64_t i = 0; i < n; ++i) static_cast<float*>(x)[i] *= alpha;
  return ok();
}
inline int axpy(nubo_cuda_backend* b, int32_t dtype, uint64_t n, float alpha, const void* x,
                void* y, nubo_cuda_status*) {
  log(b, "axpy");
  if (dtype == 0)
    for (uint64_t i = 0; i < n; ++i)
      static_cast<float*>(y)[i] += alpha * static_cast<const float*>(x)[i];
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
// One rank: all_reduce and broadcast leave the data as it is; all_gather and reduce_scatter
// copy their input to their output (what NCCL does with a single rank).
inline int nccl_collective(nubo_cuda_comm*, nubo_cuda_backend* b,
                           const nubo_cuda_collective_args* a, nubo_cuda_status* st) {
  fake().calls.push_back(*a);
  log(b, "collective");
  if (fake().collective_rc == NUBO_CUDA_CALL_FAILED)
    return failed(st, NUBO_CUDA_LIB_NCCL, fake().collective_result, "enqueue failed");
  static const std::size_t sizes[] = {4, 2, 2, 4, 8};
  const std::size_t bytes = a->count * (a->dtype >= 0 && a->dtype < 5 ? sizes[a->dtype] : 0);
  if (a->send != a->recv && bytes) std::memmove(a->recv, a->send, bytes);
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
inline void* nccl_native(nubo_cuda_comm*) {
  return &g_fake_nccl_comm;
}

}  // namespace fakes

// The table; with_nccl = false is a plugin built without NCCL.
inline const nubo_cuda_backend_api* fake_api(bool with_nccl = true) {
  static nubo_cuda_backend_api with{}, without{};
  for (auto* t : {&with, &without}) {
    t->struct_size = sizeof *t;
    t->api_version = NUBO_CUDA_BACKEND_API_VERSION;
    t->create = fakes::create;
    t->destroy = fakes::destroy;
    t->memory_info = fakes::memory_info;
    t->allocate = fakes::allocate;
    t->free = fakes::free_memory;
    t->pointer_info = fakes::pointer_info;
    t->copy = fakes::copy;
    t->synchronize = fakes::synchronize;
    t->use_stream = fakes::use_stream;
    t->use_own_stream = fakes::use_own_stream;
    t->native = fakes::native;
    t->event_create = fakes::event_create;
    t->event_destroy = fakes::event_destroy;
    t->event_record = fakes::event_record;
    t->event_wait = fakes::event_wait;
    t->event_wait_native = fakes::event_wait_native;
    t->event_query = fakes::event_query;
    t->event_synchronize = fakes::event_synchronize;
    t->event_native = fakes::event_native;
    t->gemm = fakes::gemm;
    t->fill = fakes::fill;
    t->scale = fakes::scale;
    t->axpy = fakes::axpy;
    t->host_allocate = fakes::host_allocate;
    t->host_free = fakes::host_free;
    t->peer_copy = fakes::peer_copy;
  }
  with.nccl_unique_id = fakes::nccl_unique_id;
  with.nccl_init_all = fakes::nccl_init_all;
  with.nccl_init_rank = fakes::nccl_init_rank;
  with.nccl_async_error = fakes::nccl_async_error;
  with.nccl_collective = fakes::nccl_collective;
  with.nccl_abort = fakes::nccl_abort;
  with.nccl_destroy = fakes::nccl_destroy;
  with.nccl_native = fakes::nccl_native;
  return with_nccl ? &with : &without;
}

inline std::unique_ptr<detail::CudaBackend> fake_backend(int ordinal = 0, bool with_nccl = true) {
  Device d;
  d.backend = Backend::cuda;
  d.index = d.ordinal = ordinal;
  d.name = "Fake GPU";
  nubo_cuda_backend* handle = nullptr;
  nubo_cuda_status st{};
  fakes::create(ordinal, &handle, &st);
  return std::make_unique<detail::CudaBackend>(d, fake_api(with_nccl), handle);
}

}  // namespace nubo::testing
