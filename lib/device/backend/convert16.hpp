// Bulk conversion between the 16-bit floating-point types and f32, for the host backend's
// f16/bf16 GEMM. Rounding is to nearest even, as nubo::half and nubo::bfloat16 do element by
// element; f16 uses the CPU's F16C instructions where it has them (the same results, except
// that a NaN keeps its payload instead of becoming the canonical quiet NaN).
#pragma once

#include <cstddef>

#include "nubo/dtype.hpp"

namespace nubo::detail {

// type is f16 or bf16 (anything else: f32, copied as is).
void widen_to_f32(DType type, const void* src, float* dst, std::size_t n);
void narrow_from_f32(DType type, const float* src, void* dst, std::size_t n);

}  // namespace nubo::detail
