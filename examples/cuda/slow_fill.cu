#include "slow_fill.hpp"

namespace {

__global__ void slow_fill(float* x, std::size_t n, float value, long long spin) {
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    x[i] = value;
}

}  // namespace

cudaError_t launch_slow_fill(cudaStream_t stream, float* x, std::size_t n, float value,
                             long long spin) {
  slow_fill<<<256, 256, 0, stream>>>(x, n, value, spin);
  return cudaGetLastError();
}
