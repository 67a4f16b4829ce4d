// nubo::half and nubo::bfloat16 convert exactly like the hardware: checked against GCC's
// _Float16 (IEEE binary16, round to nearest even) for every half and many floats.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "nubo/half.hpp"

using nubo::bfloat16;
using nubo::half;

TEST_CASE("every half converts to float and back unchanged") {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const half h = half::from_bits(static_cast<std::uint16_t>(b));
    const float f = static_cast<float>(h);
    const float want = static_cast<float>(std::bit_cast<_Float16>(static_cast<std::uint16_t>(b)));
    if (std::isnan(want)) {
      REQUIRE(std::isnan(f));
      continue;
    }
    REQUIRE(std::bit_cast<std::uint32_t>(f) == std::bit_cast<std::uint32_t>(want));
    REQUIRE(half(f).bits == b);
  }
}

TEST_CASE("float to half rounds to nearest even, like the hardware") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 2000000; ++i) {
    const float f = std::bit_cast<float>(bits(rng));
    if (std::isnan(f)) continue;
    const auto want = std::bit_cast<std::uint16_t>(static_cast<_Float16>(f));
    REQUIRE(half(f).bits == want);
  }
  // Around the edges: the largest half, overflow, subnormals and their halfway points.
  for (float f : {65504.0f, 65519.0f, 65520.0f, 1e9f, 5.96e-8f, 2.98e-8f, 2.99e-8f, 6.1e-5f, -0.0f,
                  1.0f + 1.0f / 2048.0f, 1.0f + 3.0f / 2048.0f}) {
    REQUIRE(half(f).bits == std::bit_cast<std::uint16_t>(static_cast<_Float16>(f)));
  }
}

TEST_CASE("bfloat16 keeps the top 16 bits, rounded to nearest even") {
  CHECK(bfloat16(1.0f).bits == 0x3f80);
  CHECK(static_cast<float>(bfloat16(3.140625f)) == 3.140625f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even one, 1.
  CHECK(bfloat16(1.0f + 1.0f / 256.0f).bits == 0x3f80);
  CHECK(bfloat16(1.0f + 3.0f / 256.0f).bits == 0x3f82);
  CHECK(std::isnan(static_cast<float>(bfloat16(NAN))));
  CHECK(std::isinf(static_cast<float>(bfloat16(3.4e38f * 2.0f))));
}
