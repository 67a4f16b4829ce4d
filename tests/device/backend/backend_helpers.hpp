// Shared by the backend tests: devices without discovery, device buffers, and references.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "device/backend/backend.hpp"
#include "nubo/device.hpp"
#include "scoped_env.hpp"

namespace nubo::testing {

inline Device host_device() {
  Device d;
  d.backend = Backend::host;
  d.name = "test cpu";
  d.model = "host";
  return d;
}

// A simulated GPU; memory 0 means the model's (set by the caller) or unlimited.
inline Device sim_device(int index, std::uint64_t memory, const std::string& model = "T4") {
  Device d;
  d.backend = Backend::sim;
  d.index = d.ordinal = index;
  d.model = model;
  d.name = "NVIDIA " + model;
  d.memory_total = memory;
  return d;
}

// The host backend and a sim backend: every CPU-side test runs on both.
inline std::vector<std::unique_ptr<detail::DeviceBackend>> cpu_backends() {
  std::vector<std::unique_ptr<detail::DeviceBackend>> out;
  out.push_back(detail::make_backend(host_device()));
  out.push_back(detail::make_backend(sim_device(0, 1ull << 30)));
  return out;
}

// Device memory holding a copy of `init`; freed at the end of the scope.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer(detail::DeviceBackend& b, const std::vector<T>& init)
      : b_(b), n_(init.size()), p_(static_cast<T*>(b.allocate(init.size() * sizeof(T)))) {
    b_.copy_to_device(p_, init.data(), n_ * sizeof(T));
  }
  DeviceBuffer(detail::DeviceBackend& b, std::size_t n, T value)
      : DeviceBuffer(b, std::vector<T>(n, value)) {}
  ~DeviceBuffer() { b_.free(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return p_; }
  std::vector<T> read() const {
    std::vector<T> out(n_);
    b_.copy_to_host(out.data(), p_, n_ * sizeof(T));
    b_.synchronize();
    return out;
  }

 private:
  detail::DeviceBackend& b_;
  std::size_t n_;
  T* p_;
};

// Deterministic pseudo-random values in [lo, hi) (a fixed LCG: the same on every machine).
inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::vector<float> out(n);
  std::uint32_t s = seed * 2654435761u + 1u;
  for (auto& v : out) {
    s = s * 1664525u + 1013904223u;
    v = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return out;
}

// C = alpha op(A) op(B) + beta C, row-major, in double: the reference for every GEMM test.
inline void naive_gemm(const Gemm& g, const std::vector<float>& a, const std::vector<float>& b,
                       std::vector<float>& c) {
  const bool ta = g.trans_a == Transpose::yes, tb = g.trans_b == Transpose::yes;
  for (std::size_t i = 0; i < g.m; ++i)
    for (std::size_t j = 0; j < g.n; ++j) {
      double acc = 0;
      for (std::size_t p = 0; p < g.k; ++p) {
        const double x = ta ? a[p * g.lda + i] : a[i * g.lda + p];
        const double y = tb ? b[j * g.ldb + p] : b[p * g.ldb + j];
        acc += x * y;
      }
      float& out = c[i * g.ldc + j];
      const double prior = g.beta == 0.0f ? 0.0 : static_cast<double>(g.beta) * out;
      out = static_cast<float>(g.alpha * acc + prior);
    }
}

using nubo_test::ScopedEnv;

}  // namespace nubo::testing
