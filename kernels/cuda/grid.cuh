// Launch shapes shared by the plugin's kernels: grid-stride loops over 64-bit element counts,
// and the launch-error check.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace nubo::cuda_plugin {

constexpr unsigned kBlock = 256;
constexpr std::uint64_t kMaxBlocks = 65535;  // grid-stride loops cover the rest

inline unsigned blocks_for(std::uint64_t n) {
  const std::uint64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

__device__ inline std::uint64_t first_index() {
  return static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::uint64_t grid_stride() {
  return static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
}

#define NUBO_GRID_LOOP(i, n) for (std::uint64_t i = first_index(); i < (n); i += grid_stride())

// Launch errors (bad configuration) are reported at once; faults during the kernel surface at
// the next synchronisation, as with any CUDA work.
inline cudaError_t launched() {
  return cudaGetLastError();
}

}  // namespace nubo::cuda_plugin
