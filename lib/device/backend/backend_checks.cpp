#include "device/backend/backend_checks.hpp"

#include <climits>
#include <limits>

#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

[[noreturn]] void bad(const std::string& who, const std::string& what) {
  throw Error(Errc::invalid_argument, who + ": " + what);
}

// Bytes spanned by a rows x cols row-major matrix with leading dimension ld; beyond size_t
// (possible with the largest legal dimensions on a 32-bit size_t) it is refused.
std::size_t span_bytes(std::size_t rows, std::size_t cols, std::size_t ld, std::size_t elem,
                       const DeviceBackend& backend, const char* name) {
  if (rows == 0 || cols == 0) return 0;
  std::size_t elements = 0, bytes = 0;
  if (__builtin_mul_overflow(rows - 1, ld, &elements) ||
      __builtin_add_overflow(elements, cols, &elements) ||
      __builtin_mul_overflow(elements, elem, &bytes))
    bad(backend.describe(),
        std::string("gemm: ") + name + " would span more bytes than memory has");
  return bytes;
}

}  // namespace

void check_float_type(DType type, const std::string& who, const char* what) {
  if (type != DType::f32 && type != DType::f16 && type != DType::bf16)
    bad(who, std::string(what) + ": type " + std::string(dtype_name(type)) +
                 " is not a floating-point type (f32, f16 or bf16)");
}

GemmPlan plan_gemm(const Gemm& g, DType type, const DeviceBackend& backend) {
  // tf32: f32 matrices multiplied in TensorFloat-32 where the device has it (the preflight
  // measures that rate); buffers never hold it, so Worker::gemm never asks for it.
  if (type == DType::tf32) type = DType::f32;
  if (type != DType::f32 && type != DType::f16 && type != DType::bf16)
    check_float_type(type, backend.describe(), "gemm");
  const std::size_t elem = dtype_size(type);
  // cuBLAS and cblas take int dimensions; nubo refuses rather than truncates.
  constexpr std::size_t kMax = INT_MAX;
  if (g.m > kMax || g.n > kMax || g.k > kMax)
    bad(backend.describe(),
        "gemm: m, n and k must each be below 2^31 (got m=" + std::to_string(g.m) +
            ", n=" + std::to_string(g.n) + ", k=" + std::to_string(g.k) + ")");

  GemmPlan p{g};
  // Stored shapes: A is (m x k) or, transposed, (k x m); B is (k x n) or (n x k).
  const bool ta = g.trans_a == Transpose::yes, tb = g.trans_b == Transpose::yes;
  const std::size_t a_rows = ta ? g.k : g.m, a_cols = ta ? g.m : g.k;
  const std::size_t b_rows = tb ? g.n : g.k, b_cols = tb ? g.k : g.n;
  auto leading = [&](std::size_t ld, std::size_t cols, const char* name) {
    // BLAS requires ld >= max(1, cols) even for empty matrices.
    const std::size_t min = cols > 0 ? cols : 1;
    if (ld == 0) return min;
    if (ld < min || ld > kMax)
      bad(backend.describe(), std::string("gemm: ") + name + "=" + std::to_string(ld) +
                                  " must be between " + std::to_string(min) +
                                  " (the stored row length) and 2^31-1");
    return ld;
  };
  p.g.lda = leading(g.lda, a_cols, "lda");
  p.g.ldb = leading(g.ldb, b_cols, "ldb");
  p.g.ldc = leading(g.ldc, g.n, "ldc");
  p.a_bytes = span_bytes(a_rows, a_cols, p.g.lda, elem, backend, "A");
  p.b_bytes = span_bytes(b_rows, b_cols, p.g.ldb, elem, backend, "B");
  p.c_bytes = span_bytes(g.m, g.n, p.g.ldc, elem, backend, "C");
  return p;
}

std::size_t checked_elements(std::size_t rows, std::size_t cols, const std::string& who,
                             const char* what) {
  if (cols != 0 && rows > std::numeric_limits<std::size_t>::max() / cols)
    bad(who, std::string(what) + ": rows x cols overflows (" + std::to_string(rows) + " x " +
                 std::to_string(cols) + ")");
  return rows * cols;
}

}  // namespace nubo::detail
