#include "device/backend_checks.hpp"

#include <climits>
#include <limits>

#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

[[noreturn]] void bad(const std::string& who, const std::string& what) {
  throw Error(Errc::invalid_argument, who + ": " + what);
}

// Bytes spanned by a rows x cols row-major matrix with leading dimension ld.
std::size_t span_bytes(std::size_t rows, std::size_t cols, std::size_t ld, std::size_t elem) {
  if (rows == 0 || cols == 0) return 0;
  return ((rows - 1) * ld + cols) * elem;
}

}  // namespace

GemmPlan plan_gemm(const Gemm& g, const std::string& who) {
  const std::size_t elem = dtype_size(g.type);
  if (elem == 0 || g.type == DType::i32 || g.type == DType::i64)
    bad(who, "gemm: type " + std::string(dtype_name(g.type)) +
                 " is not a floating-point type (f32, f16 or bf16)");
  // cuBLAS and cblas take int dimensions; nubo refuses rather than truncates.
  constexpr std::size_t kMax = INT_MAX;
  if (g.m > kMax || g.n > kMax || g.k > kMax)
    bad(who, "gemm: m, n and k must each be below 2^31 (got m=" + std::to_string(g.m) +
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
      bad(who, std::string("gemm: ") + name + "=" + std::to_string(ld) + " must be between " +
                   std::to_string(min) + " (the stored row length) and 2^31-1");
    return ld;
  };
  p.g.lda = leading(g.lda, a_cols, "lda");
  p.g.ldb = leading(g.ldb, b_cols, "ldb");
  p.g.ldc = leading(g.ldc, g.n, "ldc");
  p.a_bytes = span_bytes(a_rows, a_cols, p.g.lda, elem);
  p.b_bytes = span_bytes(b_rows, b_cols, p.g.ldb, elem);
  p.c_bytes = span_bytes(g.m, g.n, p.g.ldc, elem);
  return p;
}

std::size_t checked_elements(std::size_t rows, std::size_t cols, const std::string& who,
                             const char* what) {
  if (cols != 0 && rows > std::numeric_limits<std::size_t>::max() / cols)
    bad(who, std::string(what) + ": rows x cols overflows (" + std::to_string(rows) + " x " +
                 std::to_string(cols) + ")");
  return rows * cols;
}

void check_adam(const AdamParams& p, const std::string& who) {
  if (p.step < 1)
    bad(who, "adam: step must be >= 1 (it counts updates from 1), got " + std::to_string(p.step));
  if (!(p.beta1 >= 0.0f && p.beta1 < 1.0f) || !(p.beta2 >= 0.0f && p.beta2 < 1.0f))
    bad(who, "adam: beta1 and beta2 must be in [0, 1)");
}

}  // namespace nubo::detail
