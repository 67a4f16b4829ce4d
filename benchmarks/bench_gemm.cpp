// The host backend's GEMM against calling OpenBLAS directly: what nubo's layer costs on the CPU.
// Both run cblas_sgemm on the same buffers, interleaved, best-of-N per shape; the table gives
// GFLOP/s and the ratio nubo / OpenBLAS (1.00 = no overhead). Usage:
//   bench_gemm [--out FILE] [--quick]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "device/backend.hpp"
#include "nubo/device.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Shape {
  const char* what;
  std::size_t m, n, k;
  bool trans_a;
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Best time of `reps` runs of f, after one warm-up run.
template <class F>
double best_of(int reps, F&& f) {
  f();
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_path;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
      out_path = argv[++i];
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else {
      std::cerr << "usage: bench_gemm [--out FILE] [--quick]\n";
      return 2;
    }
  }
  const std::vector<Shape> shapes = {
      {"square", 64, 64, 64, false},
      {"square", 256, 256, 256, false},
      {"square", 512, 512, 512, false},
      {"square", 1024, 1024, 1024, false},
      {"layer fwd: batch 256, 784->512", 256, 512, 784, false},
      {"layer grad: W^T-shaped, 784x512 over batch 256", 784, 512, 256, true},
      {"skinny: batch 32, 4096->10", 32, 10, 4096, false}};

  nubo::Device host;
  host.backend = nubo::Backend::host;
  auto backend = nubo::detail::make_backend(host);

  std::ostringstream table;
  table << "| shape | m x n x k | OpenBLAS GFLOP/s | nubo host GFLOP/s | nubo / OpenBLAS |\n"
        << "|---|---|---:|---:|---:|\n";
  for (const Shape& s : shapes) {
    std::vector<float> a(s.m * s.k, 0.5f), b(s.k * s.n, 0.25f), c(s.m * s.n, 0.0f);
    nubo::detail::Gemm g;
    g.m = s.m, g.n = s.n, g.k = s.k;
    g.trans_a = s.trans_a ? nubo::detail::Transpose::yes : nubo::detail::Transpose::no;
    const double flops =
        2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    // Enough repetitions for ~0.2 s per side (fewer with --quick), at least 3.
    const auto t0 = Clock::now();
    backend->gemm(g, a.data(), b.data(), c.data());
    const double once = std::max(seconds_since(t0), 1e-7);
    const int reps = std::max(3, static_cast<int>((quick ? 0.03 : 0.2) / once));
    const int lda = static_cast<int>(s.trans_a ? s.m : s.k);
    const auto direct = [&] {
      cblas_sgemm(CblasRowMajor, s.trans_a ? CblasTrans : CblasNoTrans, CblasNoTrans,
                  static_cast<int>(s.m), static_cast<int>(s.n), static_cast<int>(s.k), 1.0f,
                  a.data(), lda, b.data(), static_cast<int>(s.n), 0.0f, c.data(),
                  static_cast<int>(s.n));
    };
    const auto via_nubo = [&] { backend->gemm(g, a.data(), b.data(), c.data()); };
    // Interleave the two, three rounds, so clock and cache drift hits both alike.
    double t_direct = 1e30, t_nubo = 1e30;
    for (int round = 0; round < 3; ++round) {
      t_direct = std::min(t_direct, best_of(reps, direct));
      t_nubo = std::min(t_nubo, best_of(reps, via_nubo));
    }
    char row[256];
    std::snprintf(row, sizeof row, "| %s | %zu x %zu x %zu | %.1f | %.1f | %.2f |\n", s.what, s.m,
                  s.n, s.k, flops / t_direct / 1e9, flops / t_nubo / 1e9, t_direct / t_nubo);
    table << row;
  }
  std::cout << table.str();
  if (!out_path.empty()) {
    std::ofstream out(out_path);
    out << "# Host backend GEMM vs OpenBLAS\n\n"
        << "`benchmarks/bench_gemm.sh` on this machine: fp32 row-major GEMM through\n"
        << "`DeviceBackend::gemm` (host backend) against `cblas_sgemm` called directly on the\n"
        << "same buffers. Best of N runs per side, interleaved over three rounds; "
        << openblas_get_config() << ", " << openblas_get_num_threads() << " threads.\n\n"
        << table.str()
        << "\nA ratio of 1.00 means the backend layer costs nothing measurable; the host backend\n"
        << "does argument checks and then the same cblas_sgemm call.\n";
  }
  return 0;
}
