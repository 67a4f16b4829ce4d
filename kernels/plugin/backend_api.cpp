// The plugin's backend table: device setup, memory, copies, streams, events, GEMM (cuBLAS) and
// the elementwise kernels, behind the C functions of
// nubo_plugin/cuda_plugin_abi.h. Every function sets the calling thread's device
// first, because a worker thread may drive any GPU, and reports failures as facts in
// nubo_cuda_status.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <new>

#include "backend_state.hpp"
#include "elementwise.hpp"
#include "optimizer.hpp"
#include "plugin_status.hpp"

namespace nubo::cuda_plugin {

int use(nubo_cuda_backend* b, nubo_cuda_status* st) {
  if (!b) return bad_argument(st, "nubo_cuda_backend", "null backend handle");
  return check_cuda(cudaSetDevice(b->ordinal), "cudaSetDevice", st);
}

namespace {

int cublas_failed(cublasStatus_t s, const char* call, nubo_cuda_status* st) {
  return fail(st, NUBO_CUDA_LIB_CUBLAS, static_cast<int32_t>(s), call, cublasGetStatusString(s));
}

void release(nubo_cuda_backend* b) {
  if (b->blas) cublasDestroy(b->blas);
  if (b->handover) cudaEventDestroy(b->handover);
  if (b->own) cudaStreamDestroy(b->own);
  delete b;
}

int create(int32_t ordinal, nubo_cuda_backend** out, nubo_cuda_status* st) {
  if (!out) return bad_argument(st, "create", "null output");
  *out = nullptr;
  auto* b = new (std::nothrow) nubo_cuda_backend{};
  if (!b) return fail(st, NUBO_CUDA_LIB_PLUGIN, NUBO_CUDA_PLUGIN_INTERNAL, "new", "no memory");
  b->ordinal = ordinal;
  int rc = check_cuda(cudaSetDevice(ordinal), "cudaSetDevice", st);
  // cudaSetDevice is lazy in recent runtimes; cudaFree(0) makes the context exist now, so that
  // a missing driver or device is reported here rather than at the first real call.
  if (rc == NUBO_CUDA_CALL_OK) rc = check_cuda(cudaFree(nullptr), "cudaFree(0)", st);
  if (rc == NUBO_CUDA_CALL_OK)
    rc = check_cuda(cudaStreamCreateWithFlags(&b->own, cudaStreamNonBlocking),
                    "cudaStreamCreateWithFlags", st);
  b->stream = b->own;
  if (rc == NUBO_CUDA_CALL_OK)
    rc = check_cuda(cudaEventCreateWithFlags(&b->handover, cudaEventDisableTiming),
                    "cudaEventCreateWithFlags", st);
  if (rc == NUBO_CUDA_CALL_OK) {
    if (const cublasStatus_t s = cublasCreate(&b->blas); s != CUBLAS_STATUS_SUCCESS)
      rc = cublas_failed(s, "cublasCreate", st);
  }
  if (rc == NUBO_CUDA_CALL_OK) {
    if (const cublasStatus_t s = cublasSetStream(b->blas, b->stream); s != CUBLAS_STATUS_SUCCESS)
      rc = cublas_failed(s, "cublasSetStream", st);
  }
  if (rc != NUBO_CUDA_CALL_OK) {
    release(b);
    return rc;
  }
  *out = b;
  return NUBO_CUDA_CALL_OK;
}

void destroy(nubo_cuda_backend* b) {
  if (!b) return;
  if (cudaSetDevice(b->ordinal) == cudaSuccess) cudaStreamSynchronize(b->stream);
  release(b);  // an application's stream in use is the application's to destroy
}

int memory_info(nubo_cuda_backend* b, uint64_t* free_bytes, uint64_t* total_bytes,
                nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  size_t f = 0, t = 0;
  if (int rc = check_cuda(cudaMemGetInfo(&f, &t), "cudaMemGetInfo", st)) return rc;
  *free_bytes = f;
  *total_bytes = t;
  return NUBO_CUDA_CALL_OK;
}

int allocate(nubo_cuda_backend* b, uint64_t bytes, void** out, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  // cudaMalloc(0) returns nullptr; nubo promises a distinct pointer, so take a minimal block.
  return check_cuda(cudaMalloc(out, bytes == 0 ? 1 : bytes), "cudaMalloc", st);
}

int free_memory(nubo_cuda_backend* b, void* ptr, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(cudaFree(ptr), "cudaFree", st);
}

int pointer_info(const void* ptr, int32_t* kind, int32_t* ordinal, nubo_cuda_status* st) {
  if (!kind || !ordinal) return bad_argument(st, "pointer_info", "null output");
  cudaPointerAttributes a{};
  if (int rc = check_cuda(cudaPointerGetAttributes(&a, ptr), "cudaPointerGetAttributes", st))
    return rc;
  switch (a.type) {
    case cudaMemoryTypeHost:
      *kind = NUBO_CUDA_MEMORY_HOST;
      break;
    case cudaMemoryTypeDevice:
      *kind = NUBO_CUDA_MEMORY_DEVICE;
      break;
    case cudaMemoryTypeManaged:
      *kind = NUBO_CUDA_MEMORY_MANAGED;
      break;
    default:
      *kind = NUBO_CUDA_MEMORY_UNREGISTERED;
  }
  *ordinal = a.type == cudaMemoryTypeUnregistered ? -1 : a.device;
  return NUBO_CUDA_CALL_OK;
}

int copy(nubo_cuda_backend* b, void* dst, const void* src, uint64_t bytes, int32_t kind,
         nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  if (kind < NUBO_CUDA_COPY_TO_DEVICE || kind > NUBO_CUDA_COPY_ON_DEVICE)
    return bad_argument(st, "copy", "unknown copy kind");
  if (bytes == 0) return NUBO_CUDA_CALL_OK;
  return check_cuda(cudaMemcpyAsync(dst, src, bytes, static_cast<cudaMemcpyKind>(kind), b->stream),
                    "cudaMemcpyAsync", st);
}

int synchronize(nubo_cuda_backend* b, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(cudaStreamSynchronize(b->stream), "cudaStreamSynchronize", st);
}

// The new stream waits for everything queued on the old one, so a switch never reorders work.
int switch_stream(nubo_cuda_backend* b, cudaStream_t next, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  if (next == b->stream) return NUBO_CUDA_CALL_OK;
  if (int rc = check_cuda(cudaEventRecord(b->handover, b->stream), "cudaEventRecord", st))
    return rc;
  if (int rc = check_cuda(cudaStreamWaitEvent(next, b->handover, 0), "cudaStreamWaitEvent", st))
    return rc;
  if (const cublasStatus_t s = cublasSetStream(b->blas, next); s != CUBLAS_STATUS_SUCCESS)
    return cublas_failed(s, "cublasSetStream", st);
  b->stream = next;
  return NUBO_CUDA_CALL_OK;
}

int use_stream(nubo_cuda_backend* b, void* stream, nubo_cuda_status* st) {
  return switch_stream(b, static_cast<cudaStream_t>(stream), st);
}

int use_own_stream(nubo_cuda_backend* b, nubo_cuda_status* st) {
  return switch_stream(b, b->own, st);
}

void native(nubo_cuda_backend* b, void** stream, void** blas) {
  *stream = b->stream;
  *blas = b->blas;
}

int event_create(nubo_cuda_backend* b, nubo_cuda_event** out, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  auto* e = new (std::nothrow) nubo_cuda_event{};
  if (!e) return fail(st, NUBO_CUDA_LIB_PLUGIN, NUBO_CUDA_PLUGIN_INTERNAL, "new", "no memory");
  e->ordinal = b->ordinal;
  if (int rc = check_cuda(cudaEventCreateWithFlags(&e->event, cudaEventDisableTiming),
                          "cudaEventCreateWithFlags", st)) {
    delete e;
    return rc;
  }
  *out = e;
  return NUBO_CUDA_CALL_OK;
}

void event_destroy(nubo_cuda_event* e) {
  if (!e) return;
  if (cudaSetDevice(e->ordinal) == cudaSuccess) cudaEventDestroy(e->event);
  delete e;
}

int event_record(nubo_cuda_backend* b, nubo_cuda_event* e, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(cudaEventRecord(e->event, b->stream), "cudaEventRecord", st);
}

int event_wait(nubo_cuda_backend* b, nubo_cuda_event* e, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(cudaStreamWaitEvent(b->stream, e->event, 0), "cudaStreamWaitEvent", st);
}

int event_wait_native(nubo_cuda_backend* b, void* event, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(cudaStreamWaitEvent(b->stream, static_cast<cudaEvent_t>(event), 0),
                    "cudaStreamWaitEvent", st);
}

int event_query(nubo_cuda_event* e, int32_t* done, nubo_cuda_status* st) {
  const cudaError_t r = cudaEventQuery(e->event);
  *done = r == cudaSuccess ? 1 : 0;
  return r == cudaErrorNotReady ? NUBO_CUDA_CALL_OK : check_cuda(r, "cudaEventQuery", st);
}

int event_synchronize(nubo_cuda_event* e, nubo_cuda_status* st) {
  return check_cuda(cudaEventSynchronize(e->event), "cudaEventSynchronize", st);
}

void* event_native(nubo_cuda_event* e) {
  return e->event;
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS gets B first, with
// the dimensions n and m swapped, and the same transpose flags and leading dimensions.
int gemm(nubo_cuda_backend* b, const nubo_cuda_gemm_args* g, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  cudaDataType_t type;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (g->dtype) {
    case 0:
      type = CUDA_R_32F;
      break;
    case 5:  // tf32: f32 matrices, multiplied in TensorFloat-32
      type = CUDA_R_32F;
      compute = CUBLAS_COMPUTE_32F_FAST_TF32;
      break;
    case 1:
      type = CUDA_R_16F;
      break;
    case 2:
      type = CUDA_R_16BF;
      break;
    default:
      return bad_argument(st, "gemm", "dtype must be f32, tf32, f16 or bf16");
  }
  if (g->m == 0 || g->n == 0) return NUBO_CUDA_CALL_OK;
  const cublasOperation_t op_a = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  // fp32 accumulation for every type; for f32 this is strict fp32 (TF32 only when asked).
  const cublasStatus_t s = cublasGemmEx(
      b->blas, op_b, op_a, static_cast<int>(g->n), static_cast<int>(g->m), static_cast<int>(g->k),
      &g->alpha, g->b, type, static_cast<int>(g->ldb), g->a, type, static_cast<int>(g->lda),
      &g->beta, g->c, type, static_cast<int>(g->ldc), compute, CUBLAS_GEMM_DEFAULT);
  return s == CUBLAS_STATUS_SUCCESS ? NUBO_CUDA_CALL_OK : cublas_failed(s, "cublasGemmEx", st);
}

// --- Elementwise kernels ----------------------------------------------------------------------

int fill(nubo_cuda_backend* b, void* x, uint64_t n, uint32_t elem_bytes, uint64_t pattern,
         nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(launch_fill(b->stream, x, n, elem_bytes, pattern), "fill kernel", st);
}

int scale(nubo_cuda_backend* b, int32_t dtype, void* x, uint64_t n, float alpha,
          nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(launch_scale(b->stream, dtype, x, n, alpha), "scale kernel", st);
}

int axpy(nubo_cuda_backend* b, int32_t dtype, uint64_t n, float alpha, const void* x, void* y,
         nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(launch_axpy(b->stream, dtype, n, alpha, x, y), "axpy kernel", st);
}

// --- Mixed precision and the optimiser ---------------------------------------------------------

int cast(nubo_cuda_backend* b, int32_t from, const void* src, int32_t to, void* dst, uint64_t n,
         nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(launch_cast(b->stream, from, src, to, dst, n), "cast kernel", st);
}

int unscale_check(nubo_cuda_backend* b, int32_t dtype, void* x, uint64_t n, float inv_scale,
                  float* stats, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(launch_unscale_check(b->stream, dtype, x, n, inv_scale, stats),
                    "unscale_check kernel", st);
}

int optimizer_step(nubo_cuda_backend* b, const nubo_cuda_optimizer_args* a, uint64_t n,
                   float* master, int32_t grad_dtype, const void* grad, float* m, float* v,
                   int32_t param_dtype, void* param, nubo_cuda_status* st) {
  if (!a) return bad_argument(st, "optimizer_step", "null arguments");
  if (int rc = use(b, st)) return rc;
  const math::OptimizerStep step{
      a->kind, a->momentum,
      math::AdamStep{a->lr, a->beta1, a->beta2, a->eps, a->weight_decay, a->c1, a->c2},
      a->grad_scale};
  return check_cuda(launch_optimizer_step(b->stream, step, n, master, grad_dtype, grad, m, v,
                                          param ? param_dtype : -1, param),
                    "optimizer_step kernel", st);
}

nubo_cuda_backend_api make_table() {
  nubo_cuda_backend_api t{};
  t.struct_size = sizeof t;
  t.api_version = NUBO_CUDA_BACKEND_API_VERSION;
  t.create = create;
  t.destroy = destroy;
  t.memory_info = memory_info;
  t.allocate = allocate;
  t.free = free_memory;
  t.pointer_info = pointer_info;
  t.copy = copy;
  t.synchronize = synchronize;
  t.use_stream = use_stream;
  t.use_own_stream = use_own_stream;
  t.native = native;
  t.event_create = event_create;
  t.event_destroy = event_destroy;
  t.event_record = event_record;
  t.event_wait = event_wait;
  t.event_wait_native = event_wait_native;
  t.event_query = event_query;
  t.event_synchronize = event_synchronize;
  t.event_native = event_native;
  t.gemm = gemm;
  t.fill = fill;
  t.scale = scale;
  t.axpy = axpy;
  t.cast = cast;
  t.unscale_check = unscale_check;
  t.optimizer_step = optimizer_step;
  fill_nccl_functions(t);
  fill_host_memory_functions(t);
  return t;
}

}  // namespace
}  // namespace nubo::cuda_plugin

extern "C" __attribute__((visibility("default"))) const nubo_cuda_backend_api*
nubo_cuda_backend_v2() noexcept {
  static const nubo_cuda_backend_api table = nubo::cuda_plugin::make_table();
  return &table;
}
