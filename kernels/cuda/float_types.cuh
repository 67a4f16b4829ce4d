// The three floating types of the kernels, f32, f16 and bf16, as one: loads and stores through
// f32 (one rounding to nearest even at the store, as nubo::half and nubo::bfloat16 do on the
// host), and the dispatch from a dtype number (nubo::DType: 0 f32, 1 f16, 2 bf16) to a
// template's launch. Shared by elementwise.cu and optimizer.cu.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace nubo::cuda_plugin {

__device__ inline float load(float v) {
  return v;
}
__device__ inline float load(__half v) {
  return __half2float(v);
}
__device__ inline float load(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <class T>
__device__ inline T store(float v);
template <>
__device__ inline float store<float>(float v) {
  return v;
}
template <>
__device__ inline __half store<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ inline __nv_bfloat16 store<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// Launch<T>::run(args...) for the dtype's T; cudaErrorInvalidValue for another dtype.
template <template <class> class Launch, class... Args>
cudaError_t by_dtype(std::int32_t dtype, Args... args) {
  switch (dtype) {
    case 0:
      return Launch<float>::run(args...);
    case 1:
      return Launch<__half>::run(args...);
    case 2:
      return Launch<__nv_bfloat16>::run(args...);
    default:
      return cudaErrorInvalidValue;
  }
}

// True for the three dtype numbers by_dtype takes.
inline bool float_dtype(std::int32_t dtype) {
  return dtype >= 0 && dtype <= 2;
}

}  // namespace nubo::cuda_plugin
