// Element types and reduction operators shared by buffers, kernels and collectives.
#pragma once

#include <cstddef>
#include <string_view>

#include "nubo/export.hpp"

namespace nubo {

// Values are part of the C ABI (nubo_dtype).
enum class DType : int { f32 = 0, f16 = 1, bf16 = 2, i32 = 3, i64 = 4 };
// Values are part of the C ABI (nubo_reduce_op).
enum class ReduceOp : int { sum = 0, avg = 1, max = 2, min = 3 };

NUBO_API std::size_t dtype_size(DType t) noexcept;
NUBO_API std::string_view dtype_name(DType t) noexcept;
NUBO_API std::string_view reduce_op_name(ReduceOp op) noexcept;

}  // namespace nubo
