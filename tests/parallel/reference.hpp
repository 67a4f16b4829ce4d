// The one-thread reference the collectives are checked against, written independently of
// lib/parallel/links/reduce.cpp from the rules it documents: ranks combined in rank order,
// f16 and bf16 accumulated in f32 and rounded once, avg = sum / n (integer division for integers),
// integer sums wrapping.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "nubo/buffer.hpp"
#include "nubo/dtype.hpp"
#include "nubo/half.hpp"

namespace nubo::test {

template <class T>
constexpr bool is_half_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

// A value for rank r, element i, that differs across ranks and elements and exercises
// rounding (floats) and the high bits (i64).
template <class T>
T input_value(int r, std::size_t i, int salt = 0) {
  const auto k = static_cast<std::int64_t>((static_cast<std::int64_t>(i) * 7 + r * 13 + salt) % 29);
  if constexpr (std::is_same_v<T, std::int64_t>) {
    return (std::int64_t{1} << 40) * (r + 1) + k - 14;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return static_cast<std::int32_t>(k * 1000 - 14000 + r);
  } else {
    const float v = static_cast<float>(k - 14) * 0.3719f + static_cast<float>(r) * 0.01f;
    return T(v);
  }
}

template <class T>
T reduce_reference(ReduceOp op, const std::vector<T>& values) {
  const int n = static_cast<int>(values.size());
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    T acc = values[0];
    for (int r = 1; r < n; ++r) {
      const T v = values[static_cast<std::size_t>(r)];
      if (op == ReduceOp::sum || op == ReduceOp::avg)
        acc = static_cast<T>(static_cast<U>(acc) + static_cast<U>(v));
      if (op == ReduceOp::max && v > acc) acc = v;
      if (op == ReduceOp::min && v < acc) acc = v;
    }
    if (op == ReduceOp::avg) acc = static_cast<T>(acc / n);
    return acc;
  } else {
    float acc = static_cast<float>(values[0]);
    for (int r = 1; r < n; ++r) {
      const float v = static_cast<float>(values[static_cast<std::size_t>(r)]);
      if (op == ReduceOp::sum || op == ReduceOp::avg) acc = acc + v;
      if (op == ReduceOp::max && v > acc) acc = v;
      if (op == ReduceOp::min && v < acc) acc = v;
    }
    if (op == ReduceOp::avg) acc = acc / static_cast<float>(n);
    return T(acc);
  }
}

// The reference for a job whose ranks are combined host by host (hierarchical_link.hpp): the
// ranks of each group (consecutive, `groups` ranks each) summed in rank order and rounded once,
// then the groups' results in group order, rounded once; avg divides that by n afterwards, in T.
// With one group (or none given) it is reduce_reference.
template <class T>
T reduce_grouped(ReduceOp op, const std::vector<T>& values, const std::vector<int>& groups) {
  if (groups.size() <= 1) return reduce_reference(op, values);
  const ReduceOp part = op == ReduceOp::avg ? ReduceOp::sum : op;
  std::vector<T> partials;
  std::size_t first = 0;
  for (int g : groups) {
    const auto begin = values.begin() + static_cast<std::ptrdiff_t>(first);
    partials.push_back(reduce_reference(part, std::vector<T>(begin, begin + g)));
    first += static_cast<std::size_t>(g);
  }
  const T total = reduce_reference(part, partials);
  if (op != ReduceOp::avg) return total;
  const int n = static_cast<int>(values.size());
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(total / n);
  } else {
    return T(static_cast<float>(total) / static_cast<float>(n));
  }
}

template <class T>
bool same_bits(T a, T b) {
  if constexpr (is_half_v<T>) {
    return a.bits == b.bits;
  } else {
    return a == b;
  }
}

template <class T>
double as_double(T v) {
  if constexpr (is_half_v<T>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

// Floating-point results reduced in another order (Gloo's ring) agree to within a few units
// of the type's precision, relative to the sum of magnitudes.
template <class T>
bool close_enough(T got, T want, double scale) {
  if constexpr (std::is_integral_v<T>) {
    return got == want;
  } else {
    double eps = std::is_same_v<T, float> ? 1e-5 : std::is_same_v<T, half> ? 4e-3 : 3e-2;
    return std::abs(as_double(got) - as_double(want)) <= eps * (scale + 1.0);
  }
}

}  // namespace nubo::test
