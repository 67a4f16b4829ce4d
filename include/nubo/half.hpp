// The two 16-bit floating-point element types of nubo buffers, as plain storage with exact
// conversions: `half` is IEEE 754 binary16 (DType::f16), `bfloat16` is the upper half of a
// binary32 (DType::bf16). Arithmetic is done in float: convert, compute, convert back.
// Conversions to the 16-bit types round to nearest, ties to even, as CUDA's __float2half_rn and
// __float2bfloat16_rn do, so host and device agree bit for bit.
#pragma once

#include <bit>
#include <cstdint>

namespace nubo {

namespace detail {

inline constexpr float f16_bits_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf, NaN
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return std::bit_cast<float>(sign);  // signed zero
  // Subnormal: normalise into binary32, which has the range for it.
  std::uint32_t e = 113;
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (e << 23) | ((mant & 0x3ffu) << 13));
}

inline constexpr std::uint16_t float_to_f16_bits(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);   // NaN stays NaN
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {
    // Result is subnormal or zero: shift the full mantissa into place, rounding to even.
    if (abs < 0x33000000u) return sign;  // below half the smallest subnormal: zero
    const std::uint32_t e = abs >> 23;
    const std::uint32_t m = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - e;  // 14 .. 24
    std::uint32_t r = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return static_cast<std::uint16_t>(sign | r);
  }
  // Normal: rebias the exponent and round the 13 dropped bits to even.
  std::uint32_t r = abs - 0x38000000u;
  r += 0xfffu + ((r >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | (r >> 13));
}

inline constexpr float bf16_bits_to_float(std::uint16_t b) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

inline constexpr std::uint16_t float_to_bf16_bits(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace detail

struct half {
  std::uint16_t bits = 0;
  half() = default;
  explicit constexpr half(float f) noexcept : bits(detail::float_to_f16_bits(f)) {}
  explicit constexpr operator float() const noexcept { return detail::f16_bits_to_float(bits); }
  static constexpr half from_bits(std::uint16_t b) noexcept {
    half h;
    h.bits = b;
    return h;
  }
  friend constexpr bool operator==(half a, half b) noexcept { return a.bits == b.bits; }
};

struct bfloat16 {
  std::uint16_t bits = 0;
  bfloat16() = default;
  explicit constexpr bfloat16(float f) noexcept : bits(detail::float_to_bf16_bits(f)) {}
  explicit constexpr operator float() const noexcept { return detail::bf16_bits_to_float(bits); }
  static constexpr bfloat16 from_bits(std::uint16_t b) noexcept {
    bfloat16 h;
    h.bits = b;
    return h;
  }
  friend constexpr bool operator==(bfloat16 a, bfloat16 b) noexcept { return a.bits == b.bits; }
};

static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2);

}  // namespace nubo
