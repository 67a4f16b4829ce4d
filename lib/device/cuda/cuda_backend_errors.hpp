// What a failure reported by the CUDA plugin means (nubo_plugin/cuda_plugin_abi.h:
// the plugin reports the library, its result code and its words; this decides the Errc and the
// advice). Pure functions, so they are tested without a GPU
// (tests/device/backend/cuda_errors_test.cpp).
#pragma once

#include <string>

#include "nubo/error.hpp"
#include "nubo_plugin/cuda_plugin_abi.h"

namespace nubo::detail {

Errc errc_for(const nubo_cuda_status& status);

// "cudaMalloc failed: cudaErrorMemoryAllocation: out of memory", plus advice where there is
// one to give, e.g. for an NCCL remote error.
std::string describe_status(const nubo_cuda_status& status);

// Throws Error(errc_for(status), who + ": " + describe_status(status)).
[[noreturn]] void throw_cuda(const nubo_cuda_status& status, const std::string& who);

// The name of an ncclResult_t value ("ncclRemoteError"), without nccl.h.
const char* nccl_result_name(int result);

// ncclResult_t values used by libnubo (stable in NCCL's ABI).
inline constexpr int kNcclSuccess = 0;
inline constexpr int kNcclInProgress = 7;

}  // namespace nubo::detail
