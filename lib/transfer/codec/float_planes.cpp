#include "transfer/codec/float_planes.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

namespace nubo::transfer {
namespace {

// Bits per byte of a histogram of `total` bytes.
double entropy(const std::array<std::size_t, 256>& counts, std::size_t total) {
  if (total == 0) return 0;
  double h = 0;
  for (auto c : counts) {
    if (c == 0) continue;
    const double p = static_cast<double>(c) / static_cast<double>(total);
    h -= p * std::log2(p);
  }
  return h;
}

// The mean, the lowest and the highest entropy of the planes of one stride.
struct StrideEntropy {
  double mean = 0, lowest = 8, highest = 0;
};

StrideEntropy stride_entropy(const std::array<std::size_t, 256>* planes, int stride,
                             std::size_t per_plane) {
  StrideEntropy e;
  for (int k = 0; k < stride; ++k) {
    const double h = entropy(planes[k], per_plane);
    e.mean += h / stride;
    e.lowest = std::min(e.lowest, h);
    e.highest = std::max(e.highest, h);
  }
  return e;
}

}  // namespace

PlaneStats plane_stats(Bytes sample) noexcept {
  // One pass: the histograms of the 4 planes of fp32 values; those of 2-byte values and of the
  // whole sample are their sums. A tail of fewer than 4 bytes is left out.
  const std::size_t quads = sample.size() / 4;
  std::array<std::array<std::size_t, 256>, 4> four{};
  for (std::size_t i = 0; i < quads; ++i)
    for (std::size_t k = 0; k < 4; ++k) ++four[k][static_cast<std::uint8_t>(sample[i * 4 + k])];
  std::array<std::array<std::size_t, 256>, 2> two{};
  std::array<std::size_t, 256> all{};
  for (std::size_t b = 0; b < 256; ++b) {
    two[0][b] = four[0][b] + four[2][b];
    two[1][b] = four[1][b] + four[3][b];
    all[b] = two[0][b] + two[1][b];
  }
  const double whole = entropy(all, quads * 4);
  const StrideEntropy by2 = stride_entropy(two.data(), 2, quads * 2);
  const StrideEntropy by4 = stride_entropy(four.data(), 4, quads);
  PlaneStats s;
  s.stride = by4.mean + 0.05 < by2.mean ? 4 : 2;
  // Floats: the exponent plane stands out (few values) from mantissa planes that are close to
  // random. Text and code have no such planes (every position holds the same kind of byte),
  // already-compressed data no predictable one.
  const StrideEntropy& e = s.stride == 4 ? by4 : by2;
  s.float_like = quads > 0 && e.highest > 7.0 && e.lowest < whole - 2.0;
  return s;
}

void split_planes(Bytes raw, int stride, std::byte* out) noexcept {
  const auto w = static_cast<std::size_t>(stride);
  const std::size_t count = raw.size() / w;
  for (std::size_t k = 0; k < w; ++k) {
    std::byte* plane = out + k * count;
    for (std::size_t i = 0; i < count; ++i) plane[i] = raw[i * w + k];
  }
  // memcpy of nothing still needs valid pointers, which an empty span need not hold.
  if (raw.size() > count * w)
    std::memcpy(out + count * w, raw.data() + count * w, raw.size() - count * w);
}

void join_planes(Bytes planes, int stride, std::byte* out) noexcept {
  const auto w = static_cast<std::size_t>(stride);
  const std::size_t count = planes.size() / w;
  for (std::size_t k = 0; k < w; ++k) {
    const std::byte* plane = planes.data() + k * count;
    for (std::size_t i = 0; i < count; ++i) out[i * w + k] = plane[i];
  }
  if (planes.size() > count * w)
    std::memcpy(out + count * w, planes.data() + count * w, planes.size() - count * w);
}

}  // namespace nubo::transfer
