// GEMM on the CPU with OpenBLAS, for the host and sim backends, in every floating-point type:
//  - f32: cblas_sgemm on the buffers themselves (tf32 too: the CPU multiplies in full f32);
//  - bf16: cblas_sbgemm where the loaded OpenBLAS has it (built with BUILD_BFLOAT16), which
//    reads the bf16 inputs directly; C goes through f32, a block of rows at a time;
//  - f16, and bf16 without sbgemm: each operand is widened to f32 (B whole, A and C a block of
//    rows at a time), multiplied by cblas_sgemm and rounded back once per element of C.
// Products are accumulated in f32 in every case, as cuBLAS does with CUBLAS_COMPUTE_32F, so the
// result differs from the f32 GEMM of the widened inputs only by the final rounding.
// Temporary memory: 2x the bytes of B, plus up to 16 MiB for the blocks of A and C.
#pragma once

#include "device/backend/backend_checks.hpp"
#include "device/host/openblas.hpp"

namespace nubo::detail {

// p comes from plan_gemm (leading dimensions filled in and checked); m and n are non-zero.
// `blas` is the worker's OpenBLAS: the process's own or a private copy (openblas_copies.hpp).
void host_gemm(const OpenBlas& blas, const GemmPlan& p, DType type, const void* a, const void* b,
               void* c);

// Which path host_gemm takes for a type, for messages and the benchmark: "cblas_sgemm",
// "cblas_sbgemm", or "f32 conversion + cblas_sgemm".
const char* host_gemm_path(DType type);

}  // namespace nubo::detail
