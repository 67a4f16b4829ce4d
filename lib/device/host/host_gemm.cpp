#include "device/host/host_gemm.hpp"

#include <algorithm>
#include <vector>

#include "device/backend/convert16.hpp"
#include "device/host/openblas.hpp"

namespace nubo::detail {
namespace {

int as_int(std::size_t v) {
  return static_cast<int>(v);  // plan_gemm checked the range
}

CBLAS_TRANSPOSE op(Transpose t) {
  return t == Transpose::yes ? CblasTrans : CblasNoTrans;
}

// Rows of C per block: the widened blocks of A and C together stay near 16 MiB.
std::size_t rows_per_block(const Gemm& g) {
  constexpr std::size_t kBlockBytes = 16u << 20;
  const std::size_t per_row = (g.k + g.n) * sizeof(float);
  return std::clamp<std::size_t>(kBlockBytes / std::max<std::size_t>(per_row, 1), 64, g.m);
}

// A rows x cols matrix with leading dimension ld, widened row by row into a packed one.
void widen_matrix(DType type, const unsigned char* src, std::size_t ld, std::size_t rows,
                  std::size_t cols, float* dst) {
  const std::size_t es = dtype_size(type);
  for (std::size_t r = 0; r < rows; ++r)
    widen_to_f32(type, src + r * ld * es, dst + r * cols, cols);
}

// Rows [i0, i0 + mb) of C in f32: beta * C read in (unless beta is 0), the product added by
// `multiply(c_block)`, then rounded back into C.
template <class Multiply>
void through_f32_c(const Gemm& g, DType type, void* c, std::size_t i0, std::size_t mb,
                   std::vector<float>& block, Multiply multiply) {
  const std::size_t es = dtype_size(type);
  auto* c_rows = static_cast<unsigned char*>(c) + i0 * g.ldc * es;
  block.resize(mb * g.n);
  if (g.beta != 0.0f) widen_matrix(type, c_rows, g.ldc, mb, g.n, block.data());
  multiply(block.data());
  for (std::size_t r = 0; r < mb; ++r)
    narrow_from_f32(type, block.data() + r * g.n, c_rows + r * g.ldc * es, g.n);
}

// The first row (trans no) or column (trans yes) of A's block of C rows starting at i0.
const unsigned char* a_block(const Gemm& g, DType type, const void* a, std::size_t i0) {
  const std::size_t offset = g.trans_a == Transpose::yes ? i0 : i0 * g.lda;
  return static_cast<const unsigned char*>(a) + offset * dtype_size(type);
}

void sbgemm_path(const OpenBlas& blas, const Gemm& g, const void* a, const void* b, void* c) {
  const auto sbgemm = blas.sbgemm;
  std::vector<float> c_block;
  const std::size_t rows = rows_per_block(g);
  for (std::size_t i0 = 0; i0 < g.m; i0 += rows) {
    const std::size_t mb = std::min(rows, g.m - i0);
    through_f32_c(g, DType::bf16, c, i0, mb, c_block, [&](float* cb) {
      sbgemm(CblasRowMajor, op(g.trans_a), op(g.trans_b), as_int(mb), as_int(g.n), as_int(g.k),
             g.alpha, reinterpret_cast<const bfloat16*>(a_block(g, DType::bf16, a, i0)),
             as_int(g.lda), static_cast<const bfloat16*>(b), as_int(g.ldb), g.beta, cb,
             as_int(g.n));
    });
  }
}

void widening_path(const OpenBlas& blas, const Gemm& g, DType type, const void* a, const void* b,
                   void* c) {
  const bool ta = g.trans_a == Transpose::yes, tb = g.trans_b == Transpose::yes;
  // B once, whole: every block of C rows needs all of it.
  const std::size_t b_rows = tb ? g.n : g.k, b_cols = tb ? g.k : g.n;
  std::vector<float> wb(b_rows * b_cols);
  widen_matrix(type, static_cast<const unsigned char*>(b), g.ldb, b_rows, b_cols, wb.data());
  std::vector<float> wa, c_block;
  const std::size_t rows = rows_per_block(g);
  for (std::size_t i0 = 0; i0 < g.m; i0 += rows) {
    const std::size_t mb = std::min(rows, g.m - i0);
    // A's block: mb rows of k (trans no), or k rows of the block's mb columns (trans yes).
    const std::size_t a_rows = ta ? g.k : mb, a_cols = ta ? mb : g.k;
    wa.resize(a_rows * a_cols);
    widen_matrix(type, a_block(g, type, a, i0), g.lda, a_rows, a_cols, wa.data());
    through_f32_c(g, type, c, i0, mb, c_block, [&](float* cb) {
      blas.sgemm(CblasRowMajor, op(g.trans_a), op(g.trans_b), as_int(mb), as_int(g.n), as_int(g.k),
                 g.alpha, wa.data(), as_int(a_cols), wb.data(), as_int(b_cols), g.beta, cb,
                 as_int(g.n));
    });
  }
}

}  // namespace

const char* host_gemm_path(DType type) {
  if (type == DType::f32 || type == DType::tf32) return "cblas_sgemm";
  if (type == DType::bf16 && openblas().sbgemm) return "cblas_sbgemm";
  return "f32 conversion + cblas_sgemm";
}

void host_gemm(const OpenBlas& blas, const GemmPlan& p, DType type, const void* a, const void* b,
               void* c) {
  const Gemm& g = p.g;
  if (type == DType::f32 || type == DType::tf32) {  // the CPU has no TF32: full f32 is finer
    blas.sgemm(CblasRowMajor, op(g.trans_a), op(g.trans_b), as_int(g.m), as_int(g.n), as_int(g.k),
               g.alpha, static_cast<const float*>(a), as_int(g.lda), static_cast<const float*>(b),
               as_int(g.ldb), g.beta, static_cast<float*>(c), as_int(g.ldc));
  } else if (type == DType::bf16 && blas.sbgemm) {
    sbgemm_path(blas, g, a, b, c);
  } else {
    widening_path(blas, g, type, a, b, c);
  }
}

}  // namespace nubo::detail
