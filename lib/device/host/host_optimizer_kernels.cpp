// The host backend's mixed-precision kernels (cast, unscale_check) and the fused optimiser
// update: loops over nubo_plugin/math.hpp, the arithmetic the CUDA kernels share. Elements of
// f16 and bf16 are widened to f32 in blocks (convert16.hpp) so that each loop runs over floats.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "device/backend/backend_checks.hpp"
#include "device/backend/convert16.hpp"
#include "device/host/host_backend.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

constexpr std::size_t kBlock = 4096;  // elements widened at a time (16 KiB of floats)

// Calls fn(first, count, floats) for consecutive blocks of x's elements as f32, floats pointing
// at element `first`: x itself (one block) when it is f32, else a widened copy.
template <class Fn>
void for_blocks_as_f32(DType type, const void* x, std::size_t n, Fn fn) {
  if (type == DType::f32) return fn(std::size_t{0}, n, static_cast<const float*>(x));
  std::array<float, kBlock> block;
  const auto* bytes = static_cast<const unsigned char*>(x);
  for (std::size_t i = 0; i < n; i += kBlock) {
    const std::size_t count = std::min(kBlock, n - i);
    widen_to_f32(type, bytes + i * dtype_size(type), block.data(), count);
    fn(i, count, block.data());
  }
}

void store_f32(DType type, const float* src, void* dst, std::size_t first, std::size_t count) {
  auto* d = static_cast<unsigned char*>(dst) + first * dtype_size(type);
  if (type == DType::f32)
    std::memcpy(d, src, count * sizeof(float));
  else
    narrow_from_f32(type, src, d, count);
}

}  // namespace

void HostBackend::cast(DType from, const void* src, DType to, void* dst, std::size_t n) {
  check_float_type(from, describe(), "cast");
  check_float_type(to, describe(), "cast");
  check_range(src, checked_elements(n, dtype_size(from), describe(), "cast"), "cast source");
  check_range(dst, checked_elements(n, dtype_size(to), describe(), "cast"), "cast destination");
  if (from == to) {
    if (src != dst) std::memmove(dst, src, n * dtype_size(to));
    return;
  }
  for_blocks_as_f32(from, src, n, [&](std::size_t first, std::size_t count, const float* f) {
    store_f32(to, f, dst, first, count);
  });
}

void HostBackend::unscale_check(DType type, void* x, std::size_t n, float inv_scale, float* stats) {
  check_float_type(type, describe(), "unscale_check");
  check_range(x, checked_elements(n, dtype_size(type), describe(), "unscale_check"),
              "unscale_check x");
  check_range(stats, 2 * sizeof(float), "unscale_check stats");
  bool finite = true;
  double squares = 0;  // double: the sum of millions of squares keeps its digits
  // One pass over x: each block unscaled, stored (rounded once to its type), and checked as
  // stored.
  std::array<float, kBlock> block;
  auto* bytes = static_cast<unsigned char*>(x);
  const std::size_t es = dtype_size(type);
  for (std::size_t first = 0; first < n; first += kBlock) {
    const std::size_t count = std::min(kBlock, n - first);
    float* f = type == DType::f32 ? static_cast<float*>(x) + first : block.data();
    if (type != DType::f32) widen_to_f32(type, bytes + first * es, f, count);
    if (inv_scale != 1.0f) {
      for (std::size_t i = 0; i < count; ++i) f[i] *= inv_scale;
      if (type != DType::f32) {
        narrow_from_f32(type, f, bytes + first * es, count);
        widen_to_f32(type, bytes + first * es, f, count);
      }
    }
    for (std::size_t i = 0; i < count; ++i) {
      finite = finite && std::isfinite(f[i]);
      squares += static_cast<double>(f[i]) * f[i];
    }
  }
  if (!finite) stats[0] = 1.0f;
  stats[1] += static_cast<float>(squares);
}

void HostBackend::optimizer_step(const math::OptimizerStep& step, std::size_t n, float* master,
                                 DType grad_type, const void* grad, float* m, float* v,
                                 DType param_type, void* param) {
  check_float_type(grad_type, describe(), "optimizer_step");
  const std::size_t bytes = checked_elements(n, sizeof(float), describe(), "optimizer_step");
  check_range(master, bytes, "optimizer_step master");
  check_range(grad, n * dtype_size(grad_type), "optimizer_step gradient");
  check_range(m, bytes, "optimizer_step state");
  if (step.kind != math::kSgd) check_range(v, bytes, "optimizer_step second moment");
  if (param) {
    check_float_type(param_type, describe(), "optimizer_step");
    check_range(param, n * dtype_size(param_type), "optimizer_step parameters");
  }
  float unused = 0;
  for_blocks_as_f32(grad_type, grad, n, [&](std::size_t first, std::size_t count, const float* g) {
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t e = first + i;
      math::optimizer_step(master[e], g[i], m[e], v ? v[e] : unused, step);
    }
    if (param && param != master) store_f32(param_type, master + first, param, first, count);
  });
}

}  // namespace nubo::detail
