#include "device/cuda/cuda_backend_errors.hpp"

#include <cstring>

namespace nubo::detail {
namespace {

// cudaError_t values (driver_types.h; stable across CUDA versions).
constexpr int kCudaInvalidValue = 1;
constexpr int kCudaMemoryAllocation = 2;
constexpr int kCudaInitializationError = 3;
constexpr int kCudaStubLibrary = 34;
constexpr int kCudaInsufficientDriver = 35;
constexpr int kCudaCallRequiresNewerDriver = 36;
constexpr int kCudaInvalidDevice = 101;
constexpr int kCudaDevicesUnavailable = 46;
constexpr int kCudaNoDevice = 100;
constexpr int kCudaNoKernelImageForDevice = 209;
constexpr int kCudaEccUncorrectable = 214;
constexpr int kCudaSystemNotReady = 802;
constexpr int kCudaSystemDriverMismatch = 803;
constexpr int kCudaCompatNotSupported = 804;

// cublasStatus_t values (cublas_api.h).
constexpr int kCublasNotInitialized = 1;
constexpr int kCublasAllocFailed = 3;
constexpr int kCublasInvalidValue = 7;
constexpr int kCublasArchMismatch = 8;
constexpr int kCublasNotSupported = 15;

Errc runtime_errc(int e) {
  switch (e) {
    case kCudaMemoryAllocation:
      return Errc::out_of_memory;
    case kCudaInvalidValue:
      return Errc::invalid_argument;
    case kCudaInitializationError:
    case kCudaStubLibrary:
    case kCudaInsufficientDriver:
    case kCudaCallRequiresNewerDriver:
    case kCudaInvalidDevice:
    case kCudaDevicesUnavailable:
    case kCudaNoDevice:
    case kCudaEccUncorrectable:
    case kCudaSystemNotReady:
    case kCudaSystemDriverMismatch:
    case kCudaCompatNotSupported:
      return Errc::unavailable;
    case kCudaNoKernelImageForDevice:
      return Errc::unsupported;
    default:
      return Errc::internal;  // a fault in a kernel or a broken invariant
  }
}

Errc cublas_errc(int s) {
  switch (s) {
    case kCublasAllocFailed:
      return Errc::out_of_memory;
    case kCublasInvalidValue:
      return Errc::invalid_argument;
    case kCublasArchMismatch:
    case kCublasNotSupported:
      return Errc::unsupported;
    case kCublasNotInitialized:
      return Errc::unavailable;
    default:
      return Errc::internal;
  }
}

Errc nccl_errc(int r) {
  switch (r) {
    case 1:
      return Errc::unavailable;  // ncclUnhandledCudaError: the GPU failed
    case 2:
      return Errc::unavailable;  // ncclSystemError: a socket, shm or syscall failed
    case 3:
      return Errc::internal;  // ncclInternalError
    case 4:
      return Errc::invalid_argument;  // ncclInvalidArgument
    case 5:
      return Errc::invalid_argument;  // ncclInvalidUsage
    case 6:
      return Errc::unavailable;  // ncclRemoteError: a peer failed or left
    case kNcclInProgress:
      return Errc::timeout;  // still running when it had to be done
    default:
      return Errc::internal;
  }
}

std::string nccl_advice(int r) {
  switch (r) {
    case 2:
      return " Check that the ranks can reach each other (NCCL_SOCKET_IFNAME picks the network "
             "interface; NCCL_DEBUG=INFO shows what NCCL tried).";
    case 5:
      return " Every rank must call the same collectives in the same order with the same count "
             "and type.";
    case 6:
      return " A peer rank failed or exited; see its own error.";
    default:
      return "";
  }
}

}  // namespace

const char* nccl_result_name(int result) {
  switch (result) {
    case 0:
      return "ncclSuccess";
    case 1:
      return "ncclUnhandledCudaError";
    case 2:
      return "ncclSystemError";
    case 3:
      return "ncclInternalError";
    case 4:
      return "ncclInvalidArgument";
    case 5:
      return "ncclInvalidUsage";
    case 6:
      return "ncclRemoteError";
    case 7:
      return "ncclInProgress";
    default:
      return "ncclResult(unknown)";
  }
}

Errc errc_for(const nubo_cuda_status& s) {
  switch (s.library) {
    case NUBO_CUDA_LIB_RUNTIME:
      return runtime_errc(s.result);
    case NUBO_CUDA_LIB_CUBLAS:
      return cublas_errc(s.result);
    case NUBO_CUDA_LIB_NCCL:
      return nccl_errc(s.result);
    case NUBO_CUDA_LIB_PLUGIN:
      return s.result == NUBO_CUDA_PLUGIN_BAD_ARGUMENT ? Errc::invalid_argument : Errc::internal;
    default:
      return Errc::internal;
  }
}

std::string describe_status(const nubo_cuda_status& s) {
  // The plugin terminates both strings; bounded reads guard against one that did not.
  const std::string call(s.call, strnlen(s.call, sizeof s.call));
  const std::string message(s.message, strnlen(s.message, sizeof s.message));
  std::string out = (call.empty() ? std::string("a CUDA call") : call) + " failed";
  if (s.library == NUBO_CUDA_LIB_NCCL) out += std::string(" (") + nccl_result_name(s.result) + ")";
  if (!message.empty()) out += ": " + message;
  if (s.library == NUBO_CUDA_LIB_NCCL) out += nccl_advice(s.result);
  if (s.library == NUBO_CUDA_LIB_RUNTIME && s.result == kCudaMemoryAllocation)
    out += ". Free buffers or use smaller batches.";
  return out;
}

void throw_cuda(const nubo_cuda_status& status, const std::string& who) {
  throw Error(errc_for(status), who + ": " + describe_status(status));
}

}  // namespace nubo::detail
