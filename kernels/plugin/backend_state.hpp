// What the plugin's opaque handles (nubo_plugin/cuda_plugin_abi.h) hold.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "nubo_plugin/cuda_plugin_abi.h"

struct nubo_cuda_backend {
  int ordinal = 0;
  cudaStream_t own = nullptr;      // the backend's own, non-blocking: never serialised with the
                                   // legacy stream
  cudaStream_t stream = nullptr;   // in use: own, or the application's (use_stream)
  cublasHandle_t blas = nullptr;   // bound to stream
  cudaEvent_t handover = nullptr;  // orders a new stream after the work queued on the old one
};

struct nubo_cuda_event {
  int ordinal = 0;
  cudaEvent_t event = nullptr;
};

namespace nubo::cuda_plugin {

// The table of backend functions (backend_api.cpp); nccl_api.cpp fills in the NCCL part,
// host_memory_api.cpp pinned host memory and peer copies.
void fill_nccl_functions(nubo_cuda_backend_api& api);
void fill_host_memory_functions(nubo_cuda_backend_api& api);
// cudaSetDevice(b->ordinal), as every backend function does first.
int use(nubo_cuda_backend* b, nubo_cuda_status* st);

}  // namespace nubo::cuda_plugin
