// The GPU benchmarks' own calls to CUDA and cuBLAS (the peers nubo is measured against): a
// failure throws std::runtime_error naming the call and the library's words.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#define CHECK_CUDA(x)                                                          \
  do {                                                                         \
    const cudaError_t e_ = (x);                                                \
    if (e_ != cudaSuccess)                                                     \
      throw std::runtime_error(#x ": " + std::string(cudaGetErrorString(e_))); \
  } while (0)
#define CHECK_CUBLAS(x)                                                           \
  do {                                                                            \
    const cublasStatus_t s_ = (x);                                                \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                              \
      throw std::runtime_error(#x ": " + std::string(cublasGetStatusString(s_))); \
  } while (0)
