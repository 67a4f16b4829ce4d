#include "device/backend/convert16.hpp"

#include <cpuid.h>
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "nubo/half.hpp"

namespace nubo::detail {
namespace {

template <class T>
void widen(const void* src, float* dst, std::size_t n) {
  const auto* s = static_cast<const T*>(src);
  for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(s[i]);
}

template <class T>
void narrow(const float* src, void* dst, std::size_t n) {
  auto* d = static_cast<T*>(dst);
  for (std::size_t i = 0; i < n; ++i) d[i] = T(src[i]);
}

// bfloat16 is the top half of a binary32: plain shifts and adds, which the compiler
// vectorises; written out so that it does (the scalar type's conversion has a NaN branch).
void widen_bf16(const void* src, float* dst, std::size_t n) {
  const auto* s = static_cast<const std::uint16_t*>(src);
  auto* d = reinterpret_cast<std::uint32_t*>(dst);
  for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<std::uint32_t>(s[i]) << 16;
}

__attribute__((target("avx,f16c"))) void widen_f16c(const void* src, float* dst, std::size_t n) {
  const auto* s = static_cast<const std::uint16_t*>(src);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  widen<half>(s + i, dst + i, n - i);
}

__attribute__((target("avx,f16c"))) void narrow_f16c(const float* src, void* dst, std::size_t n) {
  auto* d = static_cast<std::uint16_t*>(dst);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), h);
  }
  narrow<half>(src + i, d + i, n - i);
}

bool has_f16c() {
  // F16C from CPUID itself: clang's __builtin_cpu_supports does not know the name "f16c".
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
  }();
  return yes;
}

}  // namespace

void widen_to_f32(DType type, const void* src, float* dst, std::size_t n) {
  if (type == DType::bf16) return widen_bf16(src, dst, n);
  if (type == DType::f16) return has_f16c() ? widen_f16c(src, dst, n) : widen<half>(src, dst, n);
  std::memcpy(dst, src, n * sizeof(float));
}

void narrow_from_f32(DType type, const float* src, void* dst, std::size_t n) {
  if (type == DType::bf16) return narrow<bfloat16>(src, dst, n);
  if (type == DType::f16) return has_f16c() ? narrow_f16c(src, dst, n) : narrow<half>(src, dst, n);
  std::memcpy(dst, src, n * sizeof(float));
}

}  // namespace nubo::detail
