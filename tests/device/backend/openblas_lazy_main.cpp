// OpenBLAS is loaded by the first GEMM, not with libnubo: a process that never multiplies a
// matrix never starts its thread pool (lib/device/host/openblas.hpp). A program of its own, so that
// nothing else has run a GEMM in it: /proc/self/maps before and after one on the host backend.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "backend_helpers.hpp"

namespace {

bool openblas_mapped() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("libopenblas") != std::string::npos) return true;
  return false;
}

}  // namespace

int main() {
  auto backend = nubo::detail::make_backend(nubo::testing::host_device());
  if (openblas_mapped()) {
    std::fprintf(stderr, "FAILED: OpenBLAS is mapped before any GEMM\n");
    return 1;
  }
  const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  nubo::testing::DeviceBuffer<float> da(*backend, a), db(*backend, b), dc(*backend, a);
  nubo::Gemm g;
  g.m = g.n = g.k = 2;
  g.lda = g.ldb = g.ldc = 2;
  backend->gemm(g, nubo::DType::f32, da.get(), db.get(), dc.get());
  const auto c = dc.read();
  if (c != std::vector<float>{19, 22, 43, 50}) {
    std::fprintf(stderr, "FAILED: wrong product\n");
    return 1;
  }
  if (!openblas_mapped()) {
    std::fprintf(stderr, "FAILED: a GEMM ran but OpenBLAS is not mapped\n");
    return 1;
  }
  std::puts("OpenBLAS loaded by the first GEMM, not before");
  return 0;
}
