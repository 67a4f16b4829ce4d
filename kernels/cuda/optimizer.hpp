// Launchers of the mixed-precision kernels and the fused optimiser update (optimizer.cu),
// callable from the plugin's g++-compiled code (backend_api.cpp). Each enqueues on `stream` and
// returns the launch's cudaError_t (cudaErrorInvalidValue for a dtype it does not take:
// 0 f32, 1 f16, 2 bf16).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "nubo_plugin/math.hpp"

namespace nubo::cuda_plugin {

cudaError_t launch_cast(cudaStream_t s, std::int32_t from, const void* src, std::int32_t to,
                        void* dst, std::uint64_t n);
// x *= inv_scale (when not 1); stats[0] = 1 on a non-finite element; stats[1] += sum of squares.
cudaError_t launch_unscale_check(cudaStream_t s, std::int32_t dtype, void* x, std::uint64_t n,
                                 float inv_scale, float* stats);
// param_type -1: no low-precision copy.
cudaError_t launch_optimizer_step(cudaStream_t s, const math::OptimizerStep& step, std::uint64_t n,
                                  float* master, std::int32_t grad_type, const void* grad, float* m,
                                  float* v, std::int32_t param_type, void* param);

}  // namespace nubo::cuda_plugin
