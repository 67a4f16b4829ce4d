#include "transfer/float_planes.hpp"

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
  double mean = 8, lowest = 8, highest = 0;
};

StrideEntropy stride_entropy(Bytes sample, int stride) {
  const auto w = static_cast<std::size_t>(stride);
  std::array<std::array<std::size_t, 256>, 4> counts{};
  const std::size_t n = sample.size() / w * w;
  for (std::size_t i = 0; i < n; ++i) ++counts[i % w][static_cast<std::uint8_t>(sample[i])];
  StrideEntropy e{0, 8, 0};
  for (std::size_t k = 0; k < w; ++k) {
    const double h = entropy(counts[k], n / w);
    e.mean += h / static_cast<double>(w);
    e.lowest = std::min(e.lowest, h);
    e.highest = std::max(e.highest, h);
  }
  return e;
}

}  // namespace

PlaneStats plane_stats(Bytes sample) noexcept {
  std::array<std::size_t, 256> all{};
  for (auto b : sample) ++all[static_cast<std::uint8_t>(b)];
  const double whole = entropy(all, sample.size());
  const StrideEntropy two = stride_entropy(sample, 2), four = stride_entropy(sample, 4);
  PlaneStats s;
  s.stride = four.mean + 0.05 < two.mean ? 4 : 2;
  // Floats: the exponent plane stands out (few values) from mantissa planes that are close to
  // random. Text and code have no such planes (every position holds the same kind of byte),
  // already-compressed data no predictable one.
  const StrideEntropy& e = s.stride == 4 ? four : two;
  s.float_like = e.highest > 7.0 && e.lowest < whole - 2.0;
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
