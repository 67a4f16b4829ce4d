// Launchers of the trainer's model kernels (train_kernels.cu, compiled by nvcc), callable from
// the plugin's g++-compiled code (train_api.cpp). Each enqueues on `stream` and returns the
// launch's cudaError_t; the arithmetic is nubo_plugin/math.hpp, shared with the
// host's table (lib/train/host_kernels.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "nubo_plugin/math.hpp"

namespace nubo::cuda_plugin {

cudaError_t launch_bias_add(cudaStream_t s, float* y, const float* bias, std::uint64_t rows,
                            std::uint64_t cols);
cudaError_t launch_bias_grad(cudaStream_t s, const float* dy, float* dbias, std::uint64_t rows,
                             std::uint64_t cols);
cudaError_t launch_relu(cudaStream_t s, const float* x, float* y, std::uint64_t n);
cudaError_t launch_relu_grad(cudaStream_t s, const float* x, const float* dy, float* dx,
                             std::uint64_t n);
cudaError_t launch_softmax_xent_forward(cudaStream_t s, const float* logits,
                                        const std::int32_t* labels, float* probs, float* loss,
                                        std::uint64_t rows, std::uint64_t cols);
cudaError_t launch_softmax_xent_backward(cudaStream_t s, const float* probs,
                                         const std::int32_t* labels, float* dlogits,
                                         std::uint64_t rows, std::uint64_t cols, float scale);

}  // namespace nubo::cuda_plugin
