// The trainer's model kernels on CUDA (lib/train/kernels.hpp). Each is a grid-stride loop
// (or, for softmax, a warp per row) around the functions of math.hpp, so the arithmetic is the
// one the CPU tests check.
#include "grid.cuh"
#include "train_kernels.hpp"

namespace nubo::cuda_plugin {
namespace {

__global__ void bias_add_k(float* y, const float* bias, std::uint64_t n, std::uint64_t cols) {
  NUBO_GRID_LOOP(i, n) y[i] += bias[i % cols];
}

// One thread per column, rows summed in order 0, 1, ...: the host's order, so the results are
// bit-identical to the host backend's.
__global__ void bias_grad_k(const float* dy, float* dbias, std::uint64_t rows, std::uint64_t cols) {
  NUBO_GRID_LOOP(c, cols) {
    float s = 0.0f;
    for (std::uint64_t r = 0; r < rows; ++r) s += dy[r * cols + c];
    dbias[c] = s;
  }
}

__global__ void relu_k(const float* x, float* y, std::uint64_t n) {
  NUBO_GRID_LOOP(i, n) y[i] = math::relu(x[i]);
}

__global__ void relu_grad_k(const float* x, const float* dy, float* dx, std::uint64_t n) {
  NUBO_GRID_LOOP(i, n) dx[i] = math::relu_grad(x[i], dy[i]);
}

constexpr unsigned kWarp = 32;
constexpr unsigned kRowsPerBlock = kBlock / kWarp;

__device__ float warp_max(float v) {
  for (unsigned d = kWarp / 2; d > 0; d /= 2) v = math::max_of(v, __shfl_xor_sync(~0u, v, d));
  return v;
}
__device__ float warp_sum(float v) {
  for (unsigned d = kWarp / 2; d > 0; d /= 2) v += __shfl_xor_sync(~0u, v, d);
  return v;
}

// A warp per row: each lane takes every 32nd logit, the warp reduces the maximum (exact in any
// order) and the sum of exponentials (a tree instead of the host's sequence: equal within
// rounding).
__global__ void softmax_xent_forward_k(const float* logits, const std::int32_t* labels,
                                       float* probs, float* loss, std::uint64_t rows,
                                       std::uint64_t cols) {
  const unsigned lane = threadIdx.x % kWarp;
  const std::uint64_t first_row =
      static_cast<std::uint64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
  const std::uint64_t row_stride = static_cast<std::uint64_t>(gridDim.x) * kRowsPerBlock;
  for (std::uint64_t r = first_row; r < rows; r += row_stride) {
    const float* z = logits + r * cols;
    float m = -INFINITY;
    for (std::uint64_t i = lane; i < cols; i += kWarp) m = math::max_of(m, z[i]);
    m = warp_max(m);
    float s = 0.0f;
    for (std::uint64_t i = lane; i < cols; i += kWarp) s += math::shifted_exp(z[i], m);
    s = warp_sum(s);
    for (std::uint64_t i = lane; i < cols; i += kWarp)
      probs[r * cols + i] = math::softmax_prob(z[i], m, s);
    if (lane == 0) {
      const std::int32_t y = labels[r];
      loss[r] =
          math::label_ok(y, static_cast<std::int64_t>(cols)) ? math::xent_loss(m, s, z[y]) : NAN;
    }
  }
}

__global__ void softmax_xent_backward_k(const float* probs, const std::int32_t* labels,
                                        float* dlogits, std::uint64_t n, std::uint64_t cols,
                                        float scale) {
  NUBO_GRID_LOOP(i, n) {
    const std::int64_t label = labels[i / cols];
    dlogits[i] = math::xent_grad(probs[i], static_cast<std::int64_t>(i % cols) == label, scale);
  }
}

}  // namespace

cudaError_t launch_bias_add(cudaStream_t s, float* y, const float* bias, std::uint64_t rows,
                            std::uint64_t cols) {
  const std::uint64_t n = rows * cols;
  if (n == 0) return cudaSuccess;
  bias_add_k<<<blocks_for(n), kBlock, 0, s>>>(y, bias, n, cols);
  return launched();
}

cudaError_t launch_bias_grad(cudaStream_t s, const float* dy, float* dbias, std::uint64_t rows,
                             std::uint64_t cols) {
  if (cols == 0) return cudaSuccess;
  bias_grad_k<<<blocks_for(cols), kBlock, 0, s>>>(dy, dbias, rows, cols);
  return launched();
}

cudaError_t launch_relu(cudaStream_t s, const float* x, float* y, std::uint64_t n) {
  if (n == 0) return cudaSuccess;
  relu_k<<<blocks_for(n), kBlock, 0, s>>>(x, y, n);
  return launched();
}

cudaError_t launch_relu_grad(cudaStream_t s, const float* x, const float* dy, float* dx,
                             std::uint64_t n) {
  if (n == 0) return cudaSuccess;
  relu_grad_k<<<blocks_for(n), kBlock, 0, s>>>(x, dy, dx, n);
  return launched();
}

cudaError_t launch_softmax_xent_forward(cudaStream_t s, const float* logits,
                                        const std::int32_t* labels, float* probs, float* loss,
                                        std::uint64_t rows, std::uint64_t cols) {
  if (rows == 0) return cudaSuccess;
  const std::uint64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  const unsigned grid = static_cast<unsigned>(blocks > kMaxBlocks ? kMaxBlocks : blocks);
  softmax_xent_forward_k<<<grid, kBlock, 0, s>>>(logits, labels, probs, loss, rows, cols);
  return launched();
}

cudaError_t launch_softmax_xent_backward(cudaStream_t s, const float* probs,
                                         const std::int32_t* labels, float* dlogits,
                                         std::uint64_t rows, std::uint64_t cols, float scale) {
  const std::uint64_t n = rows * cols;
  if (n == 0) return cudaSuccess;
  softmax_xent_backward_k<<<blocks_for(n), kBlock, 0, s>>>(probs, labels, dlogits, n, cols, scale);
  return launched();
}

}  // namespace nubo::cuda_plugin
