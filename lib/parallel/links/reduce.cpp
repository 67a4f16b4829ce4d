#include "parallel/links/reduce.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "nubo/error.hpp"
#include "nubo/half.hpp"

namespace nubo::parallel {
namespace {

// Storage type T, accumulator type A: f16/bf16 accumulate in float, integers in the unsigned
// type of their width so that sums wrap instead of overflowing (undefined for signed types).
template <class T>
struct Traits {
  using Acc = T;
  static Acc load(T v) { return v; }
  static T store(Acc a) { return a; }
};
template <>
struct Traits<half> {
  using Acc = float;
  static float load(half v) { return static_cast<float>(v); }
  static half store(float a) { return half(a); }
};
template <>
struct Traits<bfloat16> {
  using Acc = float;
  static float load(bfloat16 v) { return static_cast<float>(v); }
  static bfloat16 store(float a) { return bfloat16(a); }
};

template <class A>
A combine(ReduceOp op, A a, A b) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg:
      if constexpr (std::is_integral_v<A>) {
        using U = std::make_unsigned_t<A>;
        return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
      } else {
        return a + b;
      }
    case ReduceOp::max:
      return b > a ? b : a;
    case ReduceOp::min:
      return b < a ? b : a;
  }
  return a;
}

// Elements per tile: the accumulators of one tile stay in L1 while every input streams past.
constexpr std::size_t kTile = 1024;

template <class T, ReduceOp Op>
void reduce_tiles(const void* const* ins, int n, void* const* outs, int n_outs, std::size_t begin,
                  std::size_t count) {
  using Tr = Traits<T>;
  using A = typename Tr::Acc;
  A acc[kTile];
  for (std::size_t t = begin; t < begin + count; t += kTile) {
    const std::size_t len = std::min(kTile, begin + count - t);
    const T* in0 = static_cast<const T*>(ins[0]) + t;
    for (std::size_t j = 0; j < len; ++j) acc[j] = Tr::load(in0[j]);
    for (int r = 1; r < n; ++r) {
      const T* in = static_cast<const T*>(ins[r]) + t;
      for (std::size_t j = 0; j < len; ++j) acc[j] = combine<A>(Op, acc[j], Tr::load(in[j]));
    }
    if constexpr (Op == ReduceOp::avg) {
      if constexpr (std::is_integral_v<A>) {
        for (std::size_t j = 0; j < len; ++j) acc[j] = static_cast<A>(acc[j] / n);
      } else {
        const A d = static_cast<A>(n);
        for (std::size_t j = 0; j < len; ++j) acc[j] = acc[j] / d;
      }
    }
    if constexpr (std::is_same_v<T, A>) {
      for (int o = 0; o < n_outs; ++o) {
        std::memcpy(static_cast<T*>(outs[o]) + t, acc, len * sizeof(T));
      }
    } else {
      T* out0 = static_cast<T*>(outs[0]) + t;
      for (std::size_t j = 0; j < len; ++j) out0[j] = Tr::store(acc[j]);
      for (int o = 1; o < n_outs; ++o) {
        std::memcpy(static_cast<T*>(outs[o]) + t, out0, len * sizeof(T));
      }
    }
  }
}

template <class T>
void reduce_typed(ReduceOp op, const void* const* ins, int n, void* const* outs, int n_outs,
                  std::size_t begin, std::size_t count) {
  switch (op) {
    case ReduceOp::sum:
      return reduce_tiles<T, ReduceOp::sum>(ins, n, outs, n_outs, begin, count);
    case ReduceOp::avg:
      return reduce_tiles<T, ReduceOp::avg>(ins, n, outs, n_outs, begin, count);
    case ReduceOp::max:
      return reduce_tiles<T, ReduceOp::max>(ins, n, outs, n_outs, begin, count);
    case ReduceOp::min:
      return reduce_tiles<T, ReduceOp::min>(ins, n, outs, n_outs, begin, count);
  }
  throw Error(Errc::invalid_argument, "unknown reduce op " + std::to_string(static_cast<int>(op)));
}

template <class T>
void divide_typed(void* buf, std::size_t count, int n) {
  using Tr = Traits<T>;
  using A = typename Tr::Acc;
  T* p = static_cast<T*>(buf);
  for (std::size_t i = 0; i < count; ++i) {
    p[i] = Tr::store(static_cast<A>(Tr::load(p[i]) / static_cast<A>(n)));
  }
}

[[noreturn]] void bad_type(DType type) {
  throw Error(Errc::invalid_argument, "unknown dtype " + std::to_string(static_cast<int>(type)));
}

}  // namespace

void reduce_ranks(DType type, ReduceOp op, const void* const* ins, int n, void* const* outs,
                  int n_outs, std::size_t begin, std::size_t count) {
  if (n <= 0 || n_outs <= 0 || count == 0) return;
  switch (type) {
    case DType::f32:
      return reduce_typed<float>(op, ins, n, outs, n_outs, begin, count);
    case DType::f16:
      return reduce_typed<half>(op, ins, n, outs, n_outs, begin, count);
    case DType::bf16:
      return reduce_typed<bfloat16>(op, ins, n, outs, n_outs, begin, count);
    case DType::i32:
      return reduce_typed<std::int32_t>(op, ins, n, outs, n_outs, begin, count);
    case DType::i64:
      return reduce_typed<std::int64_t>(op, ins, n, outs, n_outs, begin, count);
    case DType::tf32:
      break;  // no buffer holds it
  }
  bad_type(type);
}

void divide_by(DType type, void* buf, std::size_t count, int n) {
  switch (type) {
    case DType::f32:
      return divide_typed<float>(buf, count, n);
    case DType::f16:
      return divide_typed<half>(buf, count, n);
    case DType::bf16:
      return divide_typed<bfloat16>(buf, count, n);
    case DType::i32:
      return divide_typed<std::int32_t>(buf, count, n);
    case DType::i64:
      return divide_typed<std::int64_t>(buf, count, n);
    case DType::tf32:
      break;  // no buffer holds it
  }
  bad_type(type);
}

Slice slice_of(std::size_t total, int n, int i) {
  const auto un = static_cast<std::size_t>(n);
  const auto ui = static_cast<std::size_t>(i);
  const std::size_t base = total / un, extra = total % un;
  return {ui * base + std::min(ui, extra), base + (ui < extra ? 1 : 0)};
}

}  // namespace nubo::parallel
