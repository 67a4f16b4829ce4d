// The backend's elementwise kernels on the host and sim backends against their definitions:
// fill by element size, scale and axpy in f32, f16 and bf16 (computed in f32, rounded once),
// zero sizes, and the types they refuse.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "backend_helpers.hpp"
#include "nubo/error.hpp"
#include "nubo/half.hpp"

using namespace nubo;
using namespace nubo::testing;
using detail::DeviceBackend;

namespace {

std::uint64_t bits_of(float f) {
  std::uint32_t b = 0;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Values of T from floats, as the host's conversions round them.
template <class T>
std::vector<T> as(const std::vector<float>& v) {
  std::vector<T> out;
  for (float f : v) out.push_back(T(f));
  return out;
}

template <class T>
void check_scale_axpy(DeviceBackend& b, DType type) {
  const auto xs = as<T>(random_floats(257, 2)), ys = as<T>(random_floats(257, 3));
  DeviceBuffer<T> x(b, xs), y(b, ys);
  b.scale(type, x.get(), xs.size(), -3.0f);
  const auto scaled = x.read();
  for (std::size_t i = 0; i < xs.size(); ++i)
    REQUIRE(scaled[i] == T(static_cast<float>(xs[i]) * -3.0f));
  b.axpy(type, xs.size(), 0.5f, x.get(), y.get());
  const auto out = y.read();
  for (std::size_t i = 0; i < xs.size(); ++i)
    REQUIRE(out[i] == T(0.5f * static_cast<float>(scaled[i]) + static_cast<float>(ys[i])));
}

}  // namespace

TEST_CASE("fill sets every element to the pattern of its size", "[backend][kernels]") {
  for (auto& b : cpu_backends()) {
    INFO(b->describe());
    DeviceBuffer<float> x(*b, random_floats(1000, 1));
    b->fill(x.get(), 1000, 4, bits_of(2.5f));
    for (float v : x.read()) REQUIRE(v == 2.5f);

    DeviceBuffer<std::uint16_t> h(*b, 9, 0);
    b->fill(h.get(), 8, 2, 0xabcdu);  // the ninth is left alone
    const auto hv = h.read();
    for (std::size_t i = 0; i < 8; ++i) REQUIRE(hv[i] == 0xabcdu);
    CHECK(hv[8] == 0);

    DeviceBuffer<std::int64_t> l(*b, 3, 0);
    b->fill(l.get(), 3, 8, static_cast<std::uint64_t>(-7));
    CHECK(l.read() == std::vector<std::int64_t>{-7, -7, -7});

    CHECK_THROWS_AS(b->fill(x.get(), 1, 3, 0), Error);  // no 3-byte elements
  }
}

TEST_CASE("scale and axpy compute in f32 and round once, in f32, f16 and bf16",
          "[backend][kernels]") {
  for (auto& b : cpu_backends()) {
    INFO(b->describe());
    check_scale_axpy<float>(*b, DType::f32);
    check_scale_axpy<half>(*b, DType::f16);
    check_scale_axpy<bfloat16>(*b, DType::bf16);
  }
}

TEST_CASE("elementwise kernels accept zero sizes and refuse integer types", "[backend][kernels]") {
  for (auto& b : cpu_backends()) {
    INFO(b->describe());
    DeviceBuffer<float> x(*b, 4, 1.0f);
    b->fill(x.get(), 0, 4, bits_of(7.0f));
    b->scale(DType::f32, x.get(), 0, 7.0f);
    b->axpy(DType::f32, 0, 1.0f, x.get(), x.get());
    for (float v : x.read()) REQUIRE(v == 1.0f);  // nothing was touched
    for (DType t : {DType::i32, DType::i64}) {
      try {
        b->scale(t, x.get(), 1, 2.0f);
        FAIL("scaled an integer buffer");
      } catch (const Error& e) {
        CHECK(e.code() == Errc::invalid_argument);
        CHECK_THAT(e.what(), Catch::Contains("not a floating-point type"));
      }
      CHECK_THROWS_AS(b->axpy(t, 1, 1.0f, x.get(), x.get()), Error);
    }
  }
}
