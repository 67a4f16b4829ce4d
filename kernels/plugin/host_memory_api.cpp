// Page-locked host memory and copies from another GPU, for the preflight's link measurements
// (a copy from pageable memory is staged by the driver and runs well below the link's rate).
#include <cuda_runtime_api.h>

#include "backend_state.hpp"
#include "plugin_status.hpp"

namespace nubo::cuda_plugin {
namespace {

int host_allocate(uint64_t bytes, void** out, nubo_cuda_status* st) {
  if (!out) return bad_argument(st, "host_allocate", "null output");
  *out = nullptr;
  return check_cuda(cudaHostAlloc(out, bytes ? bytes : 1, cudaHostAllocPortable), "cudaHostAlloc",
                    st);
}

int host_free(void* ptr, nubo_cuda_status* st) {
  if (!ptr) return NUBO_CUDA_CALL_OK;
  return check_cuda(cudaFreeHost(ptr), "cudaFreeHost", st);
}

int peer_copy(nubo_cuda_backend* b, void* dst, const void* src, int32_t src_ordinal, uint64_t bytes,
              nubo_cuda_status* st) {
  if (int rc = use(b, st)) return rc;
  if (bytes == 0) return NUBO_CUDA_CALL_OK;
  // Direct peer access where the pair has it; without it the copy is staged through the host.
  int can = 0;
  if (src_ordinal != b->ordinal &&
      cudaDeviceCanAccessPeer(&can, b->ordinal, src_ordinal) == cudaSuccess && can) {
    const cudaError_t e = cudaDeviceEnablePeerAccess(src_ordinal, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled)
      (void)cudaGetLastError();  // enabled by an earlier copy: not an error
    else if (e != cudaSuccess)
      return check_cuda(e, "cudaDeviceEnablePeerAccess", st);
  }
  return check_cuda(cudaMemcpyPeerAsync(dst, b->ordinal, src, src_ordinal, bytes, b->stream),
                    "cudaMemcpyPeerAsync", st);
}

}  // namespace

void fill_host_memory_functions(nubo_cuda_backend_api& t) {
  t.host_allocate = host_allocate;
  t.host_free = host_free;
  t.peer_copy = peer_copy;
}

}  // namespace nubo::cuda_plugin
