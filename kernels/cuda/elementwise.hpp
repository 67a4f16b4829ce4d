// Launchers of the general elementwise kernels (elementwise.cu) behind DeviceBackend's fill,
// scale and axpy, callable from the plugin's g++-compiled code. Each enqueues on `stream` and
// returns the launch's cudaError_t (cudaErrorInvalidValue for an element size or dtype it does
// not take).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace nubo::cuda_plugin {

// n elements of elem_bytes (1, 2, 4, 8) set to the low bytes of pattern.
cudaError_t launch_fill(cudaStream_t s, void* x, std::uint64_t n, std::uint32_t elem_bytes,
                        std::uint64_t pattern);
// dtype: 0 f32, 1 f16, 2 bf16 (nubo::DType); computed in f32, rounded once to nearest even.
cudaError_t launch_scale(cudaStream_t s, std::int32_t dtype, void* x, std::uint64_t n, float alpha);
cudaError_t launch_axpy(cudaStream_t s, std::int32_t dtype, std::uint64_t n, float alpha,
                        const void* x, void* y);

}  // namespace nubo::cuda_plugin
