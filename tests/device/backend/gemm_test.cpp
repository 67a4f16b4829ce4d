// GEMM on the host and sim backends against a naive triple loop: shapes, transposes, alpha and
// beta, padded leading dimensions; and its errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "backend_helpers.hpp"
#include "nubo/error.hpp"
#include "nubo/half.hpp"

using namespace nubo;
using namespace nubo::testing;
using nubo::Gemm;
using nubo::Transpose;

namespace {

struct Shape {
  std::size_t m, n, k;
};

// The largest relative rounding of one element of each type: the tolerance of its GEMM is this
// rounding of the result, plus f32 accumulation error (k + 1 roundings of 2^-24 relative to the
// sum of the products' magnitudes).
double unit_roundoff(DType t) {
  return t == DType::f32 ? 0x1p-24 : t == DType::f16 ? 0x1p-11 : 0x1p-8;
}

template <class T>
std::vector<T> rounded(const std::vector<float>& v) {
  std::vector<T> out;
  for (float f : v) out.push_back(T(f));
  return out;
}

template <class T>
std::vector<float> widened(const std::vector<T>& v) {
  std::vector<float> out;
  for (const T& x : v) out.push_back(static_cast<float>(x));
  return out;
}

// Runs one GEMM of type T on `b` and on the double reference (over the inputs rounded to T);
// pad > 0 makes every leading dimension larger than the row, so strided access is exercised.
template <class T>
void check_gemm(detail::DeviceBackend& b, DType type, Gemm g, std::size_t pad, std::uint32_t seed) {
  const bool ta = g.trans_a == Transpose::yes, tb = g.trans_b == Transpose::yes;
  const std::size_t a_rows = ta ? g.k : g.m, a_cols = ta ? g.m : g.k;
  const std::size_t b_rows = tb ? g.n : g.k, b_cols = tb ? g.k : g.n;
  g.lda = a_cols + pad;
  g.ldb = b_cols + pad;
  g.ldc = g.n + pad;
  if (g.lda == 0) g.lda = 1;
  if (g.ldb == 0) g.ldb = 1;
  if (g.ldc == 0) g.ldc = 1;
  const auto a = rounded<T>(random_floats(std::max<std::size_t>(a_rows * g.lda, 1), seed));
  const auto bm = rounded<T>(random_floats(std::max<std::size_t>(b_rows * g.ldb, 1), seed + 1));
  const auto c0 = rounded<T>(random_floats(std::max<std::size_t>(g.m * g.ldc, 1), seed + 2));
  DeviceBuffer<T> da(b, a), db(b, bm), dc(b, c0);
  b.gemm(g, type, da.get(), db.get(), dc.get());
  const auto wa = widened(a), wb = widened(bm);
  auto expect = widened(c0);
  naive_gemm(g, wa, wb, expect);
  // What the error may be: the final rounding, plus f32 accumulation over k products.
  auto magnitude = widened(c0);
  for (auto& v : magnitude) v = std::abs(v) * std::abs(g.beta);
  std::vector<float> abs_a(wa.size()), abs_b(wb.size());
  for (std::size_t i = 0; i < wa.size(); ++i) abs_a[i] = std::abs(wa[i]);
  for (std::size_t i = 0; i < wb.size(); ++i) abs_b[i] = std::abs(wb[i]);
  Gemm abs_g = g;
  abs_g.alpha = std::abs(g.alpha);
  abs_g.beta = 1.0f;
  naive_gemm(abs_g, abs_a, abs_b, magnitude);
  const auto got = widened(dc.read());
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < expect.size(); ++i) {
    const double tol = unit_roundoff(type) * std::abs(expect[i]) +
                       0x1p-24 * static_cast<double>(g.k + 2) * magnitude[i];
    if (!(std::abs(static_cast<double>(got[i]) - expect[i]) <= tol) && bad++ == 0) first = i;
  }
  INFO("first bad element " << first << ": got " << got[first] << ", expected " << expect[first]);
  REQUIRE(bad == 0);
}

const Shape kShapes[] = {{1, 1, 1}, {3, 5, 7}, {17, 13, 29}, {64, 1, 33}, {1, 64, 9},
                         {0, 4, 5}, {4, 0, 5}, {4, 5, 0},    {40, 48, 56}};
const std::pair<float, float> kScalars[] = {{1.0f, 0.0f}, {0.5f, 2.0f}, {-1.25f, 0.75f}};

template <class T>
void check_all_shapes(DType type) {
  std::uint32_t seed = 100;
  for (auto& b : cpu_backends()) {
    for (const Shape& s : kShapes)
      for (const bool ta : {false, true})
        for (const bool tb : {false, true})
          for (const auto& [alpha, beta] : kScalars)
            for (const std::size_t pad : {0u, 3u}) {
              Gemm g;
              g.m = s.m, g.n = s.n, g.k = s.k;
              g.trans_a = ta ? Transpose::yes : Transpose::no;
              g.trans_b = tb ? Transpose::yes : Transpose::no;
              g.alpha = alpha, g.beta = beta;
              INFO(b->describe() << " " << dtype_name(type) << " m=" << s.m << " n=" << s.n
                                 << " k=" << s.k << " ta=" << ta << " tb=" << tb
                                 << " alpha=" << alpha << " beta=" << beta << " pad=" << pad);
              check_gemm<T>(*b, type, g, pad, seed += 3);
            }
  }
}

}  // namespace

// Tolerances, relative to the result: f32 2^-24, f16 2^-11, bf16 2^-8 (one rounding of C),
// plus (k + 2) * 2^-24 times the sum of |products| (f32 accumulation).
TEST_CASE("f32 GEMM matches a double reference for shapes, transposes, alpha and beta",
          "[backend][gemm]") {
  check_all_shapes<float>(DType::f32);
}

TEST_CASE("f16 GEMM on the CPU matches a double reference within one f16 rounding",
          "[backend][gemm]") {
  check_all_shapes<half>(DType::f16);
}

TEST_CASE("bf16 GEMM on the CPU matches a double reference within one bf16 rounding",
          "[backend][gemm]") {
  check_all_shapes<bfloat16>(DType::bf16);
}

TEST_CASE("16-bit GEMM larger than one block of rows covers every row", "[backend][gemm]") {
  // 16 MiB / ((k + n) * 4 bytes) = 1022 rows per block: 1100 rows take two.
  auto b = detail::make_backend(host_device());
  for (const bool ta : {false, true}) {
    Gemm g;
    g.m = 1100, g.n = 4096, g.k = 8;
    g.trans_a = ta ? Transpose::yes : Transpose::no;
    g.alpha = 1.0f, g.beta = 1.0f;
    INFO("trans_a=" << ta);
    check_gemm<bfloat16>(*b, DType::bf16, g, 0, 7);
  }
}

TEST_CASE("leading dimensions of 0 mean packed", "[backend][gemm]") {
  auto b = detail::make_backend(host_device());
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};  // 2 x 3
  const std::vector<float> m = {1, 0, 0, 1, 1, 1};  // 3 x 2
  std::vector<float> c(4, 0.0f);
  Gemm g;
  g.m = 2, g.n = 2, g.k = 3;
  b->gemm(g, DType::f32, a.data(), m.data(), c.data());
  CHECK(c == std::vector<float>{4, 5, 10, 11});
}

TEST_CASE("beta = 0 does not read C, so NaNs in it do not propagate", "[backend][gemm]") {
  for (auto& b : cpu_backends()) {
    DeviceBuffer<float> a(*b, 4, 1.0f), m(*b, 4, 1.0f);
    DeviceBuffer<float> c(*b, 4, std::numeric_limits<float>::quiet_NaN());
    Gemm g;
    g.m = 2, g.n = 2, g.k = 2;
    b->gemm(g, DType::f32, a.get(), m.get(), c.get());
    CHECK(c.read() == std::vector<float>{2, 2, 2, 2});
    DeviceBuffer<bfloat16> a16(*b, 4, bfloat16(1.0f)), m16(*b, 4, bfloat16(1.0f));
    DeviceBuffer<bfloat16> c16(*b, 4, bfloat16(std::numeric_limits<float>::quiet_NaN()));
    b->gemm(g, DType::bf16, a16.get(), m16.get(), c16.get());
    CHECK(c16.read() == std::vector<bfloat16>(4, bfloat16(2.0f)));
  }
}

TEST_CASE("GEMM rejects bad leading dimensions and integer types", "[backend][gemm]") {
  auto b = detail::make_backend(host_device());
  std::vector<float> buf(64, 0.0f);
  Gemm g;
  g.m = 4, g.n = 4, g.k = 4;
  g.lda = 3;  // a row of A has 4 elements
  try {
    b->gemm(g, DType::f32, buf.data(), buf.data(), buf.data());
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("lda=3"));
  }
  g.lda = 0;
  CHECK_THROWS_MATCHES(
      b->gemm(g, DType::i32, buf.data(), buf.data(), buf.data()), Error,
      Catch::Predicate<Error>([](const Error& e) { return e.code() == Errc::invalid_argument; }));
  g.m = std::size_t{1} << 31;
  CHECK_THROWS_AS(b->gemm(g, DType::f32, buf.data(), buf.data(), buf.data()), Error);
}
