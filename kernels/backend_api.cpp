// The plugin's backend table: device setup, memory, copies, events, GEMM (cuBLAS) and the
// kernel launchers, behind the C functions of lib/device/cuda_plugin_abi.h. Every function sets
// the calling thread's device first, because a worker thread may drive any GPU, and reports
// failures as facts in nubo_cuda_status.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <new>

#include "backend_state.hpp"
#include "kernels.hpp"
#include "plugin_status.hpp"

namespace nubo::cuda_plugin {
namespace {

int cublas_failed(cublasStatus_t s, const char* call, nubo_cuda_status* st) {
  return fail(st, NUBO_CUDA_LIB_CUBLAS, static_cast<int32_t>(s), call, cublasGetStatusString(s));
}

int use(nubo_cuda_backend* b, nubo_cuda_status* st) {
  if (!b) return bad_argument(st, "nubo_cuda_backend", "null backend handle");
  return check_cuda(cudaSetDevice(b->ordinal), "cudaSetDevice", st);
}

void release(nubo_cuda_backend* b) {
  if (b->blas) cublasDestroy(b->blas);
  if (b->stream) cudaStreamDestroy(b->stream);
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
    rc = check_cuda(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking),
                    "cudaStreamCreateWithFlags", st);
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
  release(b);
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

int event_query(nubo_cuda_event* e, int32_t* done, nubo_cuda_status* st) {
  const cudaError_t r = cudaEventQuery(e->event);
  *done = r == cudaSuccess ? 1 : 0;
  return r == cudaErrorNotReady ? NUBO_CUDA_CALL_OK : check_cuda(r, "cudaEventQuery", st);
}

int event_synchronize(nubo_cuda_event* e, nubo_cuda_status* st) {
  return check_cuda(cudaEventSynchronize(e->event), "cudaEventSynchronize", st);
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS gets B first, with
// the dimensions n and m swapped, and the same transpose flags and leading dimensions.
int gemm(nubo_cuda_backend* b, const nubo_cuda_gemm_args* g, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  cudaDataType_t type;
  switch (g->dtype) {
    case 0:
      type = CUDA_R_32F;
      break;
    case 1:
      type = CUDA_R_16F;
      break;
    case 2:
      type = CUDA_R_16BF;
      break;
    default:
      return bad_argument(st, "gemm", "dtype must be f32, f16 or bf16");
  }
  if (g->m == 0 || g->n == 0) return NUBO_CUDA_CALL_OK;
  const cublasOperation_t op_a = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  // fp32 accumulation for every type; for f32 this is strict fp32 (no TF32 rounding).
  const cublasStatus_t s = cublasGemmEx(
      b->blas, op_b, op_a, static_cast<int>(g->n), static_cast<int>(g->m), static_cast<int>(g->k),
      &g->alpha, g->b, type, static_cast<int>(g->ldb), g->a, type, static_cast<int>(g->lda),
      &g->beta, g->c, type, static_cast<int>(g->ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  return s == CUBLAS_STATUS_SUCCESS ? NUBO_CUDA_CALL_OK : cublas_failed(s, "cublasGemmEx", st);
}

// --- Kernels ------------------------------------------------------------------------------

int fill(nubo_cuda_backend* b, float* x, uint64_t n, float value, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(launch_fill(b->stream, x, n, value), "fill kernel", st);
}

int scale(nubo_cuda_backend* b, float* x, uint64_t n, float alpha, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(launch_scale(b->stream, x, n, alpha), "scale kernel", st);
}

int axpy(nubo_cuda_backend* b, uint64_t n, float alpha, const float* x, float* y,
         nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(launch_axpy(b->stream, n, alpha, x, y), "axpy kernel", st);
}

int bias_add(nubo_cuda_backend* b, float* y, const float* bias, uint64_t rows, uint64_t cols,
             nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(launch_bias_add(b->stream, y, bias, rows, cols), "bias_add kernel", st);
}

int bias_grad(nubo_cuda_backend* b, const float* dy, float* dbias, uint64_t rows, uint64_t cols,
              nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(launch_bias_grad(b->stream, dy, dbias, rows, cols), "bias_grad kernel", st);
}

int relu(nubo_cuda_backend* b, const float* x, float* y, uint64_t n, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(launch_relu(b->stream, x, y, n), "relu kernel", st);
}

int relu_grad(nubo_cuda_backend* b, const float* x, const float* dy, float* dx, uint64_t n,
              nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(launch_relu_grad(b->stream, x, dy, dx, n), "relu_grad kernel", st);
}

int softmax_xent_forward(nubo_cuda_backend* b, const float* logits, const int32_t* labels,
                         float* probs, float* loss, uint64_t rows, uint64_t cols,
                         nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(launch_softmax_xent_forward(b->stream, logits, labels, probs, loss, rows, cols),
                    "softmax_xent_forward kernel", st);
}

int softmax_xent_backward(nubo_cuda_backend* b, const float* probs, const int32_t* labels,
                          float* dlogits, uint64_t rows, uint64_t cols, float scale_by,
                          nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(
      launch_softmax_xent_backward(b->stream, probs, labels, dlogits, rows, cols, scale_by),
      "softmax_xent_backward kernel", st);
}

int sgd_momentum(nubo_cuda_backend* b, float* w, const float* grad, float* velocity, uint64_t n,
                 float lr, float momentum, float weight_decay, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  return check_cuda(
      launch_sgd_momentum(b->stream, w, grad, velocity, n, lr, momentum, weight_decay),
      "sgd_momentum kernel", st);
}

int adam(nubo_cuda_backend* b, float* w, const float* grad, float* m, float* v, uint64_t n,
         const nubo_cuda_adam_args* a, nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  const math::AdamStep step{a->lr, a->beta1, a->beta2, a->eps, a->weight_decay, a->c1, a->c2};
  return check_cuda(launch_adam(b->stream, w, grad, m, v, n, step), "adam kernel", st);
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
  t.copy = copy;
  t.synchronize = synchronize;
  t.event_create = event_create;
  t.event_destroy = event_destroy;
  t.event_record = event_record;
  t.event_wait = event_wait;
  t.event_query = event_query;
  t.event_synchronize = event_synchronize;
  t.gemm = gemm;
  t.fill = fill;
  t.scale = scale;
  t.axpy = axpy;
  t.bias_add = bias_add;
  t.bias_grad = bias_grad;
  t.relu = relu;
  t.relu_grad = relu_grad;
  t.softmax_xent_forward = softmax_xent_forward;
  t.softmax_xent_backward = softmax_xent_backward;
  t.sgd_momentum = sgd_momentum;
  t.adam = adam;
  fill_nccl_functions(t);
  return t;
}

}  // namespace
}  // namespace nubo::cuda_plugin

extern "C" __attribute__((visibility("default"))) const nubo_cuda_backend_api*
nubo_cuda_backend_v1() noexcept {
  static const nubo_cuda_backend_api table = nubo::cuda_plugin::make_table();
  return &table;
}
