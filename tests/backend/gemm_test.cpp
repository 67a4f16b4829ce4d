// GEMM on the host and sim backends against a naive triple loop: shapes, transposes, alpha and
// beta, padded leading dimensions; and its errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "backend_helpers.hpp"
#include "nubo/error.hpp"

using namespace nubo;
using namespace nubo::testing;
using detail::Gemm;
using detail::Transpose;

namespace {

struct Shape {
  std::size_t m, n, k;
};

// Runs one GEMM on `b` and on the reference; pad > 0 makes every leading dimension larger
// than the row, so strided access is exercised.
void check_gemm(detail::DeviceBackend& b, Gemm g, std::size_t pad, std::uint32_t seed) {
  const bool ta = g.trans_a == Transpose::yes, tb = g.trans_b == Transpose::yes;
  const std::size_t a_rows = ta ? g.k : g.m, a_cols = ta ? g.m : g.k;
  const std::size_t b_rows = tb ? g.n : g.k, b_cols = tb ? g.k : g.n;
  g.lda = a_cols + pad;
  g.ldb = b_cols + pad;
  g.ldc = g.n + pad;
  if (g.lda == 0) g.lda = 1;
  if (g.ldb == 0) g.ldb = 1;
  if (g.ldc == 0) g.ldc = 1;
  const auto a = random_floats(std::max<std::size_t>(a_rows * g.lda, 1), seed);
  const auto bm = random_floats(std::max<std::size_t>(b_rows * g.ldb, 1), seed + 1);
  auto c = random_floats(std::max<std::size_t>(g.m * g.ldc, 1), seed + 2);
  DeviceBuffer<float> da(b, a), db(b, bm), dc(b, c);
  b.gemm(g, da.get(), db.get(), dc.get());
  naive_gemm(g, a, bm, c);
  const auto got = dc.read();
  const double tol = 1e-5 * (static_cast<double>(g.k) + 1);
  for (std::size_t i = 0; i < c.size(); ++i) REQUIRE(got[i] == Approx(c[i]).margin(tol));
}

}  // namespace

TEST_CASE("fp32 GEMM matches a naive loop for shapes, transposes, alpha and beta",
          "[backend][gemm]") {
  const Shape shapes[] = {{1, 1, 1}, {3, 5, 7}, {17, 13, 29}, {64, 1, 33}, {1, 64, 9},
                          {0, 4, 5}, {4, 0, 5}, {4, 5, 0},    {40, 48, 56}};
  const std::pair<float, float> scalars[] = {{1.0f, 0.0f}, {0.5f, 2.0f}, {-1.25f, 0.75f}};
  std::uint32_t seed = 100;
  for (auto& b : cpu_backends()) {
    for (const Shape& s : shapes)
      for (const bool ta : {false, true})
        for (const bool tb : {false, true})
          for (const auto& [alpha, beta] : scalars)
            for (const std::size_t pad : {0u, 3u}) {
              Gemm g;
              g.m = s.m, g.n = s.n, g.k = s.k;
              g.trans_a = ta ? Transpose::yes : Transpose::no;
              g.trans_b = tb ? Transpose::yes : Transpose::no;
              g.alpha = alpha, g.beta = beta;
              INFO(b->describe() << " m=" << s.m << " n=" << s.n << " k=" << s.k << " ta=" << ta
                                 << " tb=" << tb << " alpha=" << alpha << " beta=" << beta
                                 << " pad=" << pad);
              check_gemm(*b, g, pad, seed += 3);
            }
  }
}

TEST_CASE("leading dimensions of 0 mean packed", "[backend][gemm]") {
  auto b = detail::make_backend(host_device());
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};  // 2 x 3
  const std::vector<float> m = {1, 0, 0, 1, 1, 1};  // 3 x 2
  std::vector<float> c(4, 0.0f);
  Gemm g;
  g.m = 2, g.n = 2, g.k = 3;
  b->gemm(g, a.data(), m.data(), c.data());
  CHECK(c == std::vector<float>{4, 5, 10, 11});
}

TEST_CASE("beta = 0 does not read C, so NaNs in it do not propagate", "[backend][gemm]") {
  for (auto& b : cpu_backends()) {
    DeviceBuffer<float> a(*b, 4, 1.0f), m(*b, 4, 1.0f);
    DeviceBuffer<float> c(*b, 4, std::numeric_limits<float>::quiet_NaN());
    Gemm g;
    g.m = 2, g.n = 2, g.k = 2;
    b->gemm(g, a.get(), m.get(), c.get());
    CHECK(c.read() == std::vector<float>{2, 2, 2, 2});
  }
}

TEST_CASE("fp16 and bf16 GEMM on the CPU are unsupported, with a clear message",
          "[backend][gemm]") {
  for (auto& b : cpu_backends()) {
    for (const DType t : {DType::f16, DType::bf16}) {
      DeviceBuffer<std::uint16_t> a(*b, 4, 0), m(*b, 4, 0), c(*b, 4, 0);
      Gemm g;
      g.m = 2, g.n = 2, g.k = 2;
      g.type = t;
      try {
        b->gemm(g, a.get(), m.get(), c.get());
        FAIL("no error");
      } catch (const Error& e) {
        CHECK(e.code() == Errc::unsupported);
        CHECK_THAT(e.what(), Catch::Contains(std::string(dtype_name(t))) &&
                                 Catch::Contains("CUDA") && Catch::Contains("f32"));
      }
    }
  }
}

TEST_CASE("GEMM rejects bad leading dimensions and integer types", "[backend][gemm]") {
  auto b = detail::make_backend(host_device());
  std::vector<float> buf(64, 0.0f);
  Gemm g;
  g.m = 4, g.n = 4, g.k = 4;
  g.lda = 3;  // a row of A has 4 elements
  try {
    b->gemm(g, buf.data(), buf.data(), buf.data());
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("lda=3"));
  }
  g.lda = 0;
  g.type = DType::i32;
  CHECK_THROWS_MATCHES(
      b->gemm(g, buf.data(), buf.data(), buf.data()), Error,
      Catch::Predicate<Error>([](const Error& e) { return e.code() == Errc::invalid_argument; }));
  g.type = DType::f32;
  g.m = std::size_t{1} << 31;
  CHECK_THROWS_AS(b->gemm(g, buf.data(), buf.data(), buf.data()), Error);
}
