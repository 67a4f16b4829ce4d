// Argument checks shared by every backend, done on the host before any work is queued, so a
// bad call fails the same way (Errc::invalid_argument, naming the device) on host, sim and cuda.
#pragma once

#include <cstddef>
#include <string>

#include "device/backend/backend.hpp"

namespace nubo::detail {

// Throws invalid_argument for a type that is not f32, f16 or bf16, a leading dimension that is
// too small, or dimensions too large for the BLAS's 32-bit integers; the message starts with
// the backend's describe(), which is only asked for then (it is on every GEMM's path).
GemmPlan plan_gemm(const Gemm& g, DType type, const DeviceBackend& backend);

// invalid_argument unless type is f32, f16 or bf16; `what` names the call.
void check_float_type(DType type, const std::string& who, const char* what);

// rows * cols, or invalid_argument when it overflows.
std::size_t checked_elements(std::size_t rows, std::size_t cols, const std::string& who,
                             const char* what);

}  // namespace nubo::detail
