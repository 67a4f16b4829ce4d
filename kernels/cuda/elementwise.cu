// The general elementwise kernels on CUDA, in every type DeviceBackend takes: a fill by
// element size, and scale and axpy in f32, f16 and bf16 with the host's arithmetic (f32, one
// rounding to nearest even at the store, as nubo::half and nubo::bfloat16 do on the host).
#include "elementwise.hpp"
#include "float_types.cuh"
#include "grid.cuh"
#include "nubo_plugin/math.hpp"

namespace nubo::cuda_plugin {
namespace {

template <class T>
__global__ void fill_k(T* x, std::uint64_t n, T value) {
  NUBO_GRID_LOOP(i, n) x[i] = value;
}

template <class T>
__global__ void scale_k(T* x, std::uint64_t n, float alpha) {
  NUBO_GRID_LOOP(i, n) x[i] = store<T>(__fmul_rn(load(x[i]), alpha));
}

template <class T>
__global__ void axpy_k(std::uint64_t n, float alpha, const T* x, T* y) {
  NUBO_GRID_LOOP(i, n) y[i] = store<T>(math::axpy(alpha, load(x[i]), load(y[i])));
}

template <class T>
cudaError_t fill_as(cudaStream_t s, void* x, std::uint64_t n, std::uint64_t pattern) {
  T value;
  memcpy(&value, &pattern, sizeof value);  // the low bytes (little-endian host and device)
  fill_k<T><<<blocks_for(n), kBlock, 0, s>>>(static_cast<T*>(x), n, value);
  return launched();
}

template <class T>
struct Scale {
  static cudaError_t run(cudaStream_t s, void* x, std::uint64_t n, float alpha) {
    scale_k<T><<<blocks_for(n), kBlock, 0, s>>>(static_cast<T*>(x), n, alpha);
    return launched();
  }
};

template <class T>
struct Axpy {
  static cudaError_t run(cudaStream_t s, std::uint64_t n, float alpha, const void* x, void* y) {
    axpy_k<T>
        <<<blocks_for(n), kBlock, 0, s>>>(n, alpha, static_cast<const T*>(x), static_cast<T*>(y));
    return launched();
  }
};

}  // namespace

cudaError_t launch_fill(cudaStream_t s, void* x, std::uint64_t n, std::uint32_t elem_bytes,
                        std::uint64_t pattern) {
  if (n == 0) return cudaSuccess;
  switch (elem_bytes) {
    case 1:
      return fill_as<std::uint8_t>(s, x, n, pattern);
    case 2:
      return fill_as<std::uint16_t>(s, x, n, pattern);
    case 4:
      return fill_as<std::uint32_t>(s, x, n, pattern);
    case 8:
      return fill_as<std::uint64_t>(s, x, n, pattern);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launch_scale(cudaStream_t s, std::int32_t dtype, void* x, std::uint64_t n,
                         float alpha) {
  if (n == 0) return float_dtype(dtype) ? cudaSuccess : cudaErrorInvalidValue;
  return by_dtype<Scale>(dtype, s, x, n, alpha);
}

cudaError_t launch_axpy(cudaStream_t s, std::int32_t dtype, std::uint64_t n, float alpha,
                        const void* x, void* y) {
  if (n == 0) return float_dtype(dtype) ? cudaSuccess : cudaErrorInvalidValue;
  return by_dtype<Axpy>(dtype, s, n, alpha, x, y);
}

}  // namespace nubo::cuda_plugin
