// Element types and reduction operators shared by buffers, kernels and collectives.
#pragma once

#include <cstddef>
#include <string_view>

#include "nubo/export.hpp"

namespace nubo {

// The one element type of the whole library: buffers and collectives hold the first five; the
// cost model computes in f32, tf32, f16 or bf16 (its peak-rate column). tf32 is f32 storage
// multiplied in TensorFloat-32, a compute precision, so no buffer has it. Values are part of
// the C ABI (nubo_dtype).
enum class DType : int { f32 = 0, f16 = 1, bf16 = 2, i32 = 3, i64 = 4, tf32 = 5 };
// Values are part of the C ABI (nubo_reduce_op).
enum class ReduceOp : int { sum = 0, avg = 1, max = 2, min = 3 };

// Bytes per element; 0 for tf32 (no buffer holds it) and for values outside the enum.
NUBO_API std::size_t dtype_size(DType t) noexcept;
// "f32", "f16", "bf16", "i32", "i64", "tf32".
NUBO_API std::string_view dtype_name(DType t) noexcept;
// A name as dtype_name writes it, or as users of this field spell it (fp32, float32, fp16,
// float16, half, bfloat16, int32, int64), in any case; invalid_argument naming the text else.
NUBO_API DType parse_dtype(std::string_view text);
NUBO_API std::string_view reduce_op_name(ReduceOp op) noexcept;

}  // namespace nubo
