// Filling nubo_cuda_status (nubo_plugin/cuda_plugin_abi.h) from a library's
// result: the plugin reports what the library said; libnubo decides what it means.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "fixed_text.hpp"
#include "nubo_plugin/cuda_plugin_abi.h"

namespace nubo::cuda_plugin {

inline int fail(nubo_cuda_status* st, int32_t library, int32_t result, const char* call,
                const char* message) noexcept {
  st->library = library;
  st->result = result;
  copy_text(st->call, call);
  copy_text(st->message, message ? message : "");
  return NUBO_CUDA_CALL_FAILED;
}

// NUBO_CUDA_CALL_OK for cudaSuccess, else FAILED with "cudaErrorX: its description".
inline int check_cuda(cudaError_t e, const char* call, nubo_cuda_status* st) noexcept {
  if (e == cudaSuccess) return NUBO_CUDA_CALL_OK;
  char text[NUBO_CUDA_MESSAGE_SIZE];
  const char* name = cudaGetErrorName(e);
  const char* what = cudaGetErrorString(e);
  // Both strings are static in cudart; snprintf keeps the join inside the buffer.
  std::snprintf(text, sizeof text, "%s: %s", name ? name : "?", what ? what : "?");
  return fail(st, NUBO_CUDA_LIB_RUNTIME, static_cast<int32_t>(e), call, text);
}

inline int bad_argument(nubo_cuda_status* st, const char* call, const char* why) noexcept {
  return fail(st, NUBO_CUDA_LIB_PLUGIN, NUBO_CUDA_PLUGIN_BAD_ARGUMENT, call, why);
}

}  // namespace nubo::cuda_plugin
